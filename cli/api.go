package cli

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// --- api ---------------------------------------------------------------------------

// apiMethods are the methods the REST API has routes for.
var apiMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

func (e *env) apiCommand() *cobra.Command {
	var data, idemKey string
	cmd := &cobra.Command{
		Use:   "api METHOD PATH [-d BODY]",
		Short: "Send any request to the REST API with the configured credential, and print the answer",
		Long: `Send one request to the REST API, as the other commands do (the configured
URL and credential: the token when one is set, else the administrator key),
and print the answer's body as it came, whatever its status. PATH is a route
of the API with its query (/api/ideas?limit=1); the /api prefix may be left
out (ideas/tags). -d is the JSON body, or @FILE for a file's. The exit code
is the status's: 0 for 2xx; 1 for an error, with its detail on stderr; 3
when Foundry is not there or not ready (503). To send the administrator key
while a token is set, give --token= (empty). Over gRPC (--grpc-addr) there
are no routes: api needs --url.`,
		Example: `  foundry api GET /api/cc/exchange-rate
  foundry api POST /api/ideas -d '{"name": "Solar kettle", "potential_value": 100}'
  foundry api GET 'agent/tasks?status=failed&limit=5' | jq -r '.tasks[].id'`,
		Args: args("METHOD", "PATH"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		if e.cfg.GRPCAddr != "" {
			return usagef("api sends REST requests: point it at the gateway with --url, not --grpc-addr")
		}
		method := strings.ToUpper(a[0])
		if !slices.Contains(apiMethods, method) {
			return usagef("METHOD %q: must be one of %s", a[0], strings.Join(apiMethods, ", "))
		}
		path, err := apiPath(a[1])
		if err != nil {
			return err
		}
		var body []byte
		if cmd.Flags().Changed("data") {
			if body, err = apiBody(data); err != nil {
				return err
			}
		}
		raw, err := e.client.send(ctx, method, path, body, callOpts{idempotencyKey: idemKey})
		if len(raw) > 0 {
			if raw[len(raw)-1] != '\n' {
				raw = append(raw, '\n')
			}
			if _, werr := e.stdout.Write(raw); werr != nil && err == nil {
				err = werr
			}
		}
		return err
	})
	f := cmd.Flags()
	f.StringVarP(&data, "data", "d", "", "the request's JSON body, or @FILE to send a file's")
	f.StringVar(&idemKey, "idempotency-key", "", "sent as Idempotency-Key: the same request is done at most once for it")
	return cmd
}

// apiPath is the route PATH names, from the gateway's root: /api/... as
// given, or with /api put before a path that lacks it.
func apiPath(p string) (string, error) {
	if strings.Contains(p, "://") || strings.HasPrefix(p, "//") {
		return "", usagef("PATH %q: give the route (/api/ideas), not an address: --url says where Foundry is", p)
	}
	p = "/" + strings.TrimLeft(p, "/")
	if p != "/api" && !strings.HasPrefix(p, "/api/") && !strings.HasPrefix(p, "/api?") {
		p = "/api" + p
	}
	return p, nil
}

// apiBody is -d's body: the value, or the file named after an @, which
// must be JSON (the API takes nothing else; a mistake is found before it is
// sent).
func apiBody(data string) ([]byte, error) {
	body := []byte(data)
	if name, ok := strings.CutPrefix(data, "@"); ok {
		var err error
		if body, err = os.ReadFile(name); err != nil {
			return nil, usagef("-d: %v", err)
		}
	}
	if !json.Valid(body) {
		return nil, usagef("-d is not JSON: the API takes a JSON body (or @FILE for a file's)")
	}
	return body, nil
}
