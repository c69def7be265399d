package e2e_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// outcome is what a client saw of one request.
type outcome struct {
	status  int
	err     error
	deposit string // the deposit's reference, for POSTs
	after   bool   // sent after SIGTERM
}

// refused reports whether err means the request never reached the server:
// the connection was refused (the listener had closed). Such a request was
// not accepted, so it cannot have failed.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" && errors.Is(err, syscall.ECONNREFUSED)
}

// TestGracefulShutdownUnderLoad sends SIGTERM to a running Foundry while
// clients send 200 requests a second (reads, and deposits carrying an
// Idempotency-Key as a well-behaved client's writes do). Every request the
// server accepted must succeed: only connections refused after the
// listener closed may fail. The process exits 0 within its drain timeout,
// and after a restart every acknowledged deposit is there exactly once.
func TestGracefulShutdownUnderLoad(t *testing.T) {
	t.Parallel()
	for _, engine := range []database.Engine{database.SQLite, database.Postgres} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			storage := allinonetest.NewStorage(t, engine)
			// The shutdown delay keeps the listener open a second after
			// SIGTERM, as in Kubernetes, so requests arrive while the
			// process is already stopping.
			proc := allinonetest.NewProc(t, "foundry", "all", storage, "-shutdown-delay=1s", "-shutdown-timeout=10s")
			proc.Start()

			ada := registerOn(t, proc.URL(""), "ada")
			client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			defer client.CloseIdleConnections()

			const workers, perWorkerPerSecond = 8, 25 // 200 requests a second
			var (
				mu       sync.Mutex
				outcomes []outcome
				wg       sync.WaitGroup
				stopping = make(chan struct{})
				stop     = make(chan struct{})
			)
			for w := range workers {
				wg.Go(func() {
					tick := time.NewTicker(time.Second / perWorkerPerSecond)
					defer tick.Stop()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						case <-tick.C:
						}
						after := false
						select {
						case <-stopping:
							after = true
						default:
						}
						o := outcome{after: after}
						var req *http.Request
						if i%2 == 0 {
							req, _ = http.NewRequest(http.MethodGet, proc.URL("/api/ideas?limit=5"), nil)
						} else {
							o.deposit = fmt.Sprintf("w%d-%d", w, i)
							body, _ := json.Marshal(map[string]any{"contributor_id": ada, "amount_usd": 1, "reference": o.deposit})
							req, _ = http.NewRequest(http.MethodPost, proc.URL("/api/cc/deposit"), bytes.NewReader(body))
							req.Header.Set("Content-Type", "application/json")
							req.Header.Set("X-API-Key", allinonetest.AdminKey)
							// Makes the request replayable: Go's client then
							// resends it when a keep-alive connection closes
							// under it before the server read it.
							req.Header.Set("Idempotency-Key", o.deposit)
						}
						resp, err := client.Do(req)
						if err == nil {
							o.status = resp.StatusCode
							_, _ = io.Copy(io.Discard, resp.Body)
							_ = resp.Body.Close()
						}
						o.err = err
						mu.Lock()
						outcomes = append(outcomes, o)
						mu.Unlock()
					}
				})
			}

			// Slow uploads: deposits whose body arrives over a second,
			// started just before draining begins, so the server is in the
			// middle of reading them when it stops accepting. A drain that
			// cut connections instead of finishing requests would fail them.
			slow := make(chan outcome, 4)
			sendSlow := func(ref string) {
				pr, pw := io.Pipe()
				go func() {
					body, _ := json.Marshal(map[string]any{"contributor_id": ada, "amount_usd": 1, "reference": ref})
					_, _ = pw.Write(body[:len(body)/2])
					time.Sleep(time.Second)
					_, _ = pw.Write(body[len(body)/2:])
					_ = pw.Close()
				}()
				req, _ := http.NewRequest(http.MethodPost, proc.URL("/api/cc/deposit"), pr)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-API-Key", allinonetest.AdminKey)
				o := outcome{deposit: ref, after: true}
				resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
				if o.err = err; err == nil {
					o.status = resp.StatusCode
					_ = resp.Body.Close()
				}
				slow <- o
			}

			time.Sleep(1500 * time.Millisecond)
			close(stopping)
			sent := time.Now()
			proc.Signal(syscall.SIGTERM)
			time.Sleep(700 * time.Millisecond) // the shutdown delay is 1 s
			for i := range cap(slow) {
				go sendSlow(fmt.Sprintf("slow-%d", i))
			}
			exited, exitErr := proc.Wait(30 * time.Second)
			took := time.Since(sent)
			time.Sleep(200 * time.Millisecond) // a few refused requests after the exit
			close(stop)
			wg.Wait()
			require.True(t, exited, "still running 30 s after SIGTERM:\n%s", proc.Output())
			require.NoError(t, exitErr, "exit status:\n%s", proc.Output())
			require.Less(t, took, 10*time.Second+1*time.Second+2*time.Second,
				"exit within the shutdown delay plus the drain timeout (and a little for the databases)")

			acked := map[string]bool{}
			for range cap(slow) {
				o := <-slow
				require.NoError(t, o.err, "a request the server was reading when draining began failed")
				require.Equal(t, http.StatusCreated, o.status, "slow deposit %s", o.deposit)
				acked[o.deposit] = true
			}
			var served, servedAfter, refusedCount int
			for _, o := range outcomes {
				switch {
				case o.err != nil:
					require.True(t, refused(o.err), "an accepted request failed (sent after SIGTERM: %v): %v", o.after, o.err)
					refusedCount++
				case o.deposit != "":
					require.Contains(t, []int{http.StatusCreated, http.StatusOK}, o.status, "deposit %s", o.deposit)
					acked[o.deposit] = true
				default:
					require.Equal(t, http.StatusOK, o.status, "list ideas")
				}
				if o.err == nil {
					served++
					if o.after {
						servedAfter++
					}
				}
			}
			t.Logf("%d requests served (%d after SIGTERM), %d refused after the listener closed; exit %s after SIGTERM",
				served, servedAfter, refusedCount, took.Round(time.Millisecond))
			require.Greater(t, servedAfter, 0, "requests kept being served during the shutdown delay")
			require.Greater(t, refusedCount, 0, "the load went on until the process had gone")

			// Every acknowledged deposit survived the shutdown, once.
			again := allinonetest.NewProc(t, "foundry-again", "all", storage)
			again.Start()
			r := request(t, http.MethodGet, again.URL("/api/cc/balances/"+ada), nil)
			requireStatus(t, http.StatusOK, r)
			require.InDelta(t, 99.5*float64(len(acked)), r.JSON["available_cc"], 1e-6,
				"%d acknowledged deposits of $1 mint 99.5 CC each", len(acked))
		})
	}
}

// registerOn registers handle on the gateway at base and returns the
// contributor id.
func registerOn(t *testing.T, base, handle string) string {
	t.Helper()
	r := request(t, http.MethodPost, base+"/api/onboarding/register", map[string]any{"handle": handle}, anonymous)
	requireStatus(t, http.StatusCreated, r)
	id, _ := r.JSON["contributor_id"].(string)
	require.NotEmpty(t, id)
	return id
}
