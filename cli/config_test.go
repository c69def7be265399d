package cli

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"
)

// resolve parses args as the client's flags and resolves the settings
// with env as the whole environment.
func resolve(t *testing.T, env map[string]string, args ...string) (config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("foundry", pflag.ContinueOnError)
	configPath := fs.String("config", "", "")
	registerSettingFlags(fs)
	require.NoError(t, fs.Parse(args))
	return resolveConfig(fs, *configPath, func(k string) string { return env[k] })
}

// writeFile writes content to dir/rel and returns the path.
func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	path := filepath.Join(dir, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	file := writeFile(t, xdg, "foundry/cli.json", `{"url": "http://file:1/", "token": "file-token", "api_key": "file-key"}`)
	base := map[string]string{"XDG_CONFIG_HOME": xdg}

	t.Run("defaults alone", func(t *testing.T) {
		c, err := resolve(t, map[string]string{"HOME": t.TempDir()})
		require.NoError(t, err)
		require.Equal(t, config{URL: "http://127.0.0.1:8080"}, c)
	})
	t.Run("the file over the defaults; its trailing slash dropped", func(t *testing.T) {
		c, err := resolve(t, base)
		require.NoError(t, err)
		require.Equal(t, config{URL: "http://file:1", Token: "file-token", APIKey: "file-key", TokenFile: file}, c,
			"the token is the file's, for logout to forget")
	})
	t.Run("the environment over the file, setting by setting", func(t *testing.T) {
		c, err := resolve(t, map[string]string{"XDG_CONFIG_HOME": xdg, "FOUNDRY_URL": "http://env:2", "FOUNDRY_API_KEY": "env-key"})
		require.NoError(t, err)
		require.Equal(t, config{URL: "http://env:2", Token: "file-token", APIKey: "env-key", TokenFile: file}, c)
		c, err = resolve(t, map[string]string{"XDG_CONFIG_HOME": xdg, "FOUNDRY_TOKEN": "env-token"})
		require.NoError(t, err)
		require.Equal(t, "env-token", c.Token)
		require.Empty(t, c.TokenFile, "a token the environment gives is not the file's")
	})
	t.Run("an empty variable is unset", func(t *testing.T) {
		c, err := resolve(t, map[string]string{"XDG_CONFIG_HOME": xdg, "FOUNDRY_TOKEN": ""})
		require.NoError(t, err)
		require.Equal(t, "file-token", c.Token)
		require.Equal(t, file, c.TokenFile)
	})
	t.Run("the flag over the environment, even empty", func(t *testing.T) {
		c, err := resolve(t, map[string]string{"XDG_CONFIG_HOME": xdg, "FOUNDRY_URL": "http://env:2", "FOUNDRY_TOKEN": "env-token"},
			"--url", "https://flag:3/prefix", "--token=")
		require.NoError(t, err)
		require.Equal(t, config{URL: "https://flag:3/prefix", APIKey: "file-key"}, c)
	})
	t.Run("gRPC: the address selects it; a person needs no service key", func(t *testing.T) {
		c, err := resolve(t, base, "--grpc-addr", "127.0.0.1:9090")
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1:9090", c.GRPCAddr)
		require.Empty(t, c.ServiceKey)
		c, err = resolve(t, map[string]string{"XDG_CONFIG_HOME": xdg, "FOUNDRY_CLI_GRPC_ADDR": "127.0.0.1:9090", "FOUNDRY_CLI_SERVICE_KEY": "sk"})
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1:9090", c.GRPCAddr)
		require.Equal(t, "sk", c.ServiceKey)
	})
	t.Run("the server's own variables are not the client's", func(t *testing.T) {
		c, err := resolve(t, map[string]string{"HOME": t.TempDir(), "FOUNDRY_GRPC_ADDR": "127.0.0.1:9090", "FOUNDRY_SERVICE_KEY": "sk"})
		require.NoError(t, err)
		require.Equal(t, config{URL: "http://127.0.0.1:8080"}, c, "REST, as if unset")
	})
	t.Run("an explicitly empty --grpc-addr returns to REST", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "foundry/cli.json", `{"grpc_addr": "127.0.0.1:9090"}`)
		c, err := resolve(t, map[string]string{"XDG_CONFIG_HOME": dir}, "--grpc-addr=")
		require.NoError(t, err)
		require.Equal(t, config{URL: "http://127.0.0.1:8080"}, c)
	})
}

func TestConfigFile(t *testing.T) {
	t.Parallel()
	t.Run("HOME when XDG_CONFIG_HOME is unset or relative", func(t *testing.T) {
		home := t.TempDir()
		writeFile(t, home, ".config/foundry/cli.json", `{"url": "http://home:1"}`)
		for _, xdg := range []string{"", "relative/dir"} {
			c, err := resolve(t, map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg})
			require.NoError(t, err)
			require.Equal(t, "http://home:1", c.URL, "XDG_CONFIG_HOME=%q", xdg)
		}
	})
	t.Run("--config over FOUNDRY_CLI_CONFIG over the default", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "foundry/cli.json", `{"url": "http://default:1"}`)
		byEnv := writeFile(t, dir, "env.json", `{"url": "http://env-file:2"}`)
		byFlag := writeFile(t, dir, "flag.json", `{"url": "http://flag-file:3"}`)
		env := map[string]string{"XDG_CONFIG_HOME": dir, "FOUNDRY_CLI_CONFIG": byEnv}
		c, err := resolve(t, env)
		require.NoError(t, err)
		require.Equal(t, "http://env-file:2", c.URL)
		c, err = resolve(t, env, "--config", byFlag)
		require.NoError(t, err)
		require.Equal(t, "http://flag-file:3", c.URL)
		c, err = resolve(t, env, "--config=")
		require.NoError(t, err)
		require.Equal(t, "http://127.0.0.1:8080", c.URL, "--config= reads no file")
	})
	t.Run("a missing named file is an error, a missing default one is not", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "none.json")
		_, err := resolve(t, nil, "--config", missing)
		require.EqualError(t, err, "config file: open "+missing+": no such file or directory")
		_, err = resolve(t, map[string]string{"FOUNDRY_CLI_CONFIG": missing})
		require.EqualError(t, err, "config file: open "+missing+": no such file or directory")
		c, err := resolve(t, map[string]string{"XDG_CONFIG_HOME": filepath.Dir(missing)})
		require.NoError(t, err)
		require.Equal(t, "http://127.0.0.1:8080", c.URL)
	})
	t.Run("bad files", func(t *testing.T) {
		dir := t.TempDir()
		for content, want := range map[string]string{
			`{"url": "http://x", "tokn": "t"}`: `config file %s: unknown setting "tokn" (known: api_key, grpc_addr, servers, service_key, token, url)`,
			`{"url": 8080}`:                    `config file %s: "url" must be a string`,
			`["url"]`:                          `config file %s: not a JSON object: json: cannot unmarshal array into Go value of type map[string]interface {}`,
			`{"url": "http://x"} {}`:           `config file %s: more than one JSON value`,
			`url = "http://x"`:                 `config file %s: not a JSON object: invalid character 'u' looking for beginning of value`,
		} {
			path := writeFile(t, dir, "bad.json", content)
			_, err := resolve(t, nil, "--config", path)
			require.EqualError(t, err, fmt.Sprintf(want, path), content)
		}
	})
	t.Run("bad addresses", func(t *testing.T) {
		for url, want := range map[string]string{
			"127.0.0.1:8080":          `--url "127.0.0.1:8080" is not an http:// or https:// address`,
			"ftp://host":              `--url "ftp://host" is not an http:// or https:// address`,
			"http://":                 `--url "http://" is not an http:// or https:// address`,
			"http://host/api?x=1":     `--url "http://host/api?x=1" must not carry a query or fragment`,
			"http://host/#top":        `--url "http://host/#top" must not carry a query or fragment`,
			"http://host:8080/prefix": "",
		} {
			_, err := resolve(t, map[string]string{"FOUNDRY_URL": url})
			if want == "" {
				require.NoError(t, err, url)
				continue
			}
			require.EqualError(t, err, want, url)
		}
	})
}

func TestUpdateConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	t.Run("a new file, its directory made, readable by its owner alone", func(t *testing.T) {
		path := filepath.Join(dir, "new", "foundry", "cli.json")
		require.NoError(t, updateConfigFile(path, func(f *configFile) { f.values["token"] = "t1" }))
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.JSONEq(t, `{"token": "t1"}`, string(raw))
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	})
	t.Run("the other settings stay; a readable file becomes private", func(t *testing.T) {
		path := writeFile(t, dir, "shared.json", `{"url": "https://f.example.com", "api_key": "k"}`)
		require.NoError(t, os.Chmod(path, 0o644))
		require.NoError(t, updateConfigFile(path, func(f *configFile) { f.values["token"] = "t2" }))
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.JSONEq(t, `{"url": "https://f.example.com", "api_key": "k", "token": "t2"}`, string(raw))
		info, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
		require.NoError(t, updateConfigFile(path, func(f *configFile) { delete(f.values, "token") }))
		raw, err = os.ReadFile(path)
		require.NoError(t, err)
		require.JSONEq(t, `{"url": "https://f.example.com", "api_key": "k"}`, string(raw))
	})
	t.Run("a link is followed: the file stays where it is kept", func(t *testing.T) {
		target := writeFile(t, dir, "kept/cli.json", `{}`)
		link := filepath.Join(dir, "link.json")
		require.NoError(t, os.Symlink(target, link))
		require.NoError(t, updateConfigFile(link, func(f *configFile) { f.values["token"] = "t3" }))
		raw, err := os.ReadFile(target)
		require.NoError(t, err)
		require.JSONEq(t, `{"token": "t3"}`, string(raw))
		info, err := os.Lstat(link)
		require.NoError(t, err)
		require.Equal(t, os.ModeSymlink, info.Mode().Type(), "still a link")
	})
	t.Run("a file the client cannot read is left as it is", func(t *testing.T) {
		path := writeFile(t, dir, "odd.json", `{"tokn": "x"}`)
		err := updateConfigFile(path, func(f *configFile) { f.values["token"] = "t4" })
		require.ErrorContains(t, err, `unknown setting "tokn"`)
		raw, rerr := os.ReadFile(path)
		require.NoError(t, rerr)
		require.Equal(t, `{"tokn": "x"}`, string(raw))
	})
}

func TestServerTokens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, dir, "cli.json", `{"url": "http://a:1", "token": "any-server",
		"servers": {"http://a:1": {"token": "a-token"}, "grpc://g:9": {"token": "g-token"}, "http://c:3": {}}}`)
	env := map[string]string{"FOUNDRY_CLI_CONFIG": file}

	t.Run("the server's own token, from its section", func(t *testing.T) {
		for _, args := range [][]string{nil, {"--url", "http://a:1/"}} {
			c, err := resolve(t, env, args...)
			require.NoError(t, err)
			require.Equal(t, config{URL: "http://a:1", Token: "a-token", TokenFile: file, TokenServer: "http://a:1"}, c, "%q", args)
		}
		c, err := resolve(t, with(env, "FOUNDRY_CLI_GRPC_ADDR", "g:9", "FOUNDRY_CLI_SERVICE_KEY", "sk"))
		require.NoError(t, err)
		require.Equal(t, "g-token", c.Token, "a gRPC address is a server of its own")
		require.Equal(t, "grpc://g:9", c.TokenServer)
	})
	t.Run("another server gets the file's own token, never a section's", func(t *testing.T) {
		for _, url := range []string{"http://b:2", "http://c:3"} {
			c, err := resolve(t, env, "--url", url)
			require.NoError(t, err)
			require.Equal(t, config{URL: url, Token: "any-server", TokenFile: file}, c, url)
		}
		only := writeFile(t, dir, "sections.json", `{"servers": {"http://a:1": {"token": "a-token"}}}`)
		c, err := resolve(t, map[string]string{"FOUNDRY_CLI_CONFIG": only, "FOUNDRY_URL": "http://b:2"})
		require.NoError(t, err)
		require.Equal(t, config{URL: "http://b:2"}, c, "a's token does not go to b")
	})
	t.Run("the flag and the environment over the section", func(t *testing.T) {
		c, err := resolve(t, with(env, "FOUNDRY_TOKEN", "env-token"))
		require.NoError(t, err)
		require.Equal(t, config{URL: "http://a:1", Token: "env-token"}, c)
		c, err = resolve(t, env, "--token=")
		require.NoError(t, err)
		require.Equal(t, config{URL: "http://a:1"}, c)
	})
	t.Run("bad sections", func(t *testing.T) {
		for content, want := range map[string]string{
			`{"servers": ["http://a:1"]}`:                   `config file %s: "servers" must be an object of servers, each {"token": "…"}`,
			`{"servers": {"http://a:1": "t"}}`:              `config file %s: "http://a:1" of "servers" must be an object: {"token": "…"}`,
			`{"servers": {"http://a:1": {"tokn": "t"}}}`:    `config file %s: "http://a:1" of "servers": unknown member "tokn" (known: token)`,
			`{"servers": {"http://a:1": {"token": ["t"]}}}`: `config file %s: "http://a:1" of "servers": "token" must be a string`,
			`{"servers": {"http://a:1": {"api_key": "k"}}}`: `config file %s: "http://a:1" of "servers": unknown member "api_key" (known: token)`,
		} {
			path := writeFile(t, dir, "bad.json", content)
			_, err := resolve(t, nil, "--config", path)
			require.EqualError(t, err, fmt.Sprintf(want, path), content)
		}
	})
}

func TestKeepServerTokens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	read := func(path string) string {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(raw)
	}

	path := writeFile(t, dir, "cli.json", `{"url": "http://a:1", "token": "any-server"}`)
	require.NoError(t, updateConfigFile(path, func(f *configFile) { f.setServerToken("http://a:1", "a-token") }))
	require.NoError(t, updateConfigFile(path, func(f *configFile) { f.setServerToken("grpc://g:9", "g-token") }))
	require.JSONEq(t, `{"url": "http://a:1", "token": "any-server",
		"servers": {"http://a:1": {"token": "a-token"}, "grpc://g:9": {"token": "g-token"}}}`, read(path))

	// forgetToken removes the token from where it was found, only while
	// the file still holds that token there.
	require.NoError(t, updateConfigFile(path, func(f *configFile) { f.forgetToken("http://a:1", "another") }))
	require.Contains(t, read(path), "a-token", "changed since: left alone")
	require.NoError(t, updateConfigFile(path, func(f *configFile) { f.forgetToken("http://a:1", "a-token") }))
	require.JSONEq(t, `{"url": "http://a:1", "token": "any-server", "servers": {"grpc://g:9": {"token": "g-token"}}}`, read(path),
		"the empty section goes")
	require.NoError(t, updateConfigFile(path, func(f *configFile) { f.forgetToken("", "any-server") }))
	require.NoError(t, updateConfigFile(path, func(f *configFile) { f.forgetToken("grpc://g:9", "g-token") }))
	require.JSONEq(t, `{"url": "http://a:1"}`, read(path), "no servers left: no servers member")
}

// with returns env plus the given name=value pairs.
func with(env map[string]string, pairs ...string) map[string]string {
	out := maps.Clone(env)
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = pairs[i+1]
	}
	return out
}
