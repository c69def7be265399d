package config_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/config"
)

// FuzzParseEnv checks how environment values become settings: a blank value
// keeps the default; any other is read, trimmed, exactly as the flag would
// read it (a duration by time.ParseDuration, a number by strconv, a bool by
// strconv.ParseBool); and a value that does not parse is an error naming
// the variable, never a silent default.
func FuzzParseEnv(f *testing.F) {
	f.Add("90s", "42", "0.5", "true", "host:1")
	f.Add("", "", "", "", "")
	f.Add("  6h ", " -7 ", "1e308", "0", " x ")
	f.Add("1", "9223372036854775808", "NaN", "yes", "\xff")
	f.Add("-1ns", "0x10", "inf", "T", "é")
	f.Add("1.5h30m", "1_000", "0x1p-2", "maybe", "a=b")
	f.Add("9223372036854775807ns", "+3", "-0", "FALSE", "\t")
	f.Fuzz(func(t *testing.T, delay, rate, ratio, on, addr string) {
		var s struct {
			delay time.Duration
			rate  int
			ratio float64
			on    bool
			addr  string
		}
		fs := config.New("fuzz")
		fs.Duration(&s.delay, "delay", "F_DELAY", time.Second, "")
		fs.Int(&s.rate, "rate", "F_RATE", 30, "")
		fs.Float(&s.ratio, "ratio", "F_RATIO", 0.25, "")
		fs.Bool(&s.on, "on", "F_ON", true, "")
		fs.String(&s.addr, "addr", "F_ADDR", "default", "")
		env := map[string]string{"F_DELAY": delay, "F_RATE": rate, "F_RATIO": ratio, "F_ON": on, "F_ADDR": addr}
		_, err := fs.Parse(nil, func(k string) string { return env[k] })

		// What each variable should give: its default when blank, else
		// the trimmed value as the flag parses it; ok is whether it parses.
		trim := strings.TrimSpace
		wantDelay, delayErr := time.Second, error(nil)
		if v := trim(delay); v != "" {
			wantDelay, delayErr = time.ParseDuration(v)
		}
		wantRate, rateErr := int64(30), error(nil)
		if v := trim(rate); v != "" {
			wantRate, rateErr = strconv.ParseInt(v, 0, strconv.IntSize)
		}
		wantRatio, ratioErr := 0.25, error(nil)
		if v := trim(ratio); v != "" {
			wantRatio, ratioErr = strconv.ParseFloat(v, 64)
		}
		wantOn, onErr := true, error(nil)
		if v := trim(on); v != "" {
			wantOn, onErr = strconv.ParseBool(v)
		}
		wantAddr := "default"
		if v := trim(addr); v != "" {
			wantAddr = v
		}
		failing := map[string]bool{"F_DELAY": delayErr != nil, "F_RATE": rateErr != nil, "F_RATIO": ratioErr != nil, "F_ON": onErr != nil}
		if failing["F_DELAY"] || failing["F_RATE"] || failing["F_RATIO"] || failing["F_ON"] {
			// The first failure (in map order) stops Parse, so only the
			// error is pinned: it names a variable that fails.
			require.Error(t, err, "a value that does not parse must fail")
			named := false
			for env, bad := range failing {
				named = named || bad && strings.Contains(err.Error(), "environment "+env+"=")
			}
			require.True(t, named, "the error names a failing variable: %v", err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, wantDelay, s.delay)
		require.Equal(t, wantRate, int64(s.rate))
		if math.IsNaN(wantRatio) {
			require.True(t, math.IsNaN(s.ratio))
		} else {
			require.Equal(t, wantRatio, s.ratio)
		}
		require.Equal(t, wantOn, s.on)
		require.Equal(t, wantAddr, s.addr)
	})
}
