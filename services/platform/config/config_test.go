package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/config"
)

type settings struct {
	addr  string
	rate  int
	delay time.Duration
	on    bool
}

func setup(t *testing.T) (*config.FlagSet, *settings) {
	t.Helper()
	s := &settings{}
	fs := config.New("test")
	fs.String(&s.addr, "addr", "T_ADDR", "127.0.0.1:1", "address")
	fs.Int(&s.rate, "rate", "T_RATE", 30, "rate")
	fs.Duration(&s.delay, "delay", "T_DELAY", time.Second, "delay")
	fs.Bool(&s.on, "on", "T_ON", true, "switch")
	return fs, s
}

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want settings
	}{
		{"defaults", nil, nil, settings{"127.0.0.1:1", 30, time.Second, true}},
		{"env overrides default", nil, map[string]string{"T_ADDR": ":9", "T_RATE": "0", "T_DELAY": "5s", "T_ON": "false"}, settings{":9", 0, 5 * time.Second, false}},
		{"flag overrides env", []string{"-rate=7"}, map[string]string{"T_RATE": "0"}, settings{"127.0.0.1:1", 7, time.Second, true}},
		{"empty env is unset", nil, map[string]string{"T_ADDR": "  "}, settings{"127.0.0.1:1", 30, time.Second, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs, got := setup(t)
			_, err := fs.Parse(tt.args, env(tt.env))
			require.NoError(t, err)
			require.Equal(t, tt.want, *got)
		})
	}
}

func TestBadEnvironmentValueNamesTheVariable(t *testing.T) {
	t.Parallel()
	fs, _ := setup(t)
	_, err := fs.Parse(nil, env(map[string]string{"T_RATE": "lots"}))
	require.ErrorContains(t, err, "T_RATE")
}

func TestGiven(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want bool
	}{
		{"neither flag nor variable", nil, map[string]string{"T_RATE": "3"}, false},
		{"the flag, even empty", []string{"-addr="}, nil, true},
		{"the variable with a value", nil, map[string]string{"T_ADDR": ":9"}, true},
		{"the variable present but empty", nil, map[string]string{"T_ADDR": ""}, true},
		{"the variable present but blank", nil, map[string]string{"T_ADDR": "  "}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs, got := setup(t)
			_, err := fs.ParseLookup(tt.args, func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			require.NoError(t, err)
			require.Equal(t, tt.want, fs.Given("addr"), "Given(addr)")
			if tt.args == nil && tt.env["T_ADDR"] != ":9" {
				require.Equal(t, "127.0.0.1:1", got.addr, "an empty variable still means the default")
			}
		})
	}
}
