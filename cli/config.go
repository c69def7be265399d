package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// config is the client's connection settings, resolved.
type config struct {
	// URL is the gateway's root, without a trailing slash.
	URL string
	// APIKey is the administrator key (X-API-Key).
	APIKey string
	// Token is a contributor's session token or an API token
	// (Authorization: Bearer).
	Token string
	// GRPCAddr, when set, selects gRPC: the services' address.
	GRPCAddr string
	// ServiceKey is what a gRPC caller presents (foundry-service-key).
	ServiceKey string
	// KeyFile is where APIKey was read from when it came from a local
	// Foundry's data directory (localAdminKey); "" otherwise.
	KeyFile string
	// TokenFile is the config file Token came from; "" when the flag or
	// the environment set it, or nothing did. logout forgets a token only
	// there: one given by a flag or a variable is the shell's to forget.
	TokenFile string
	// TokenServer is the server whose section of the config file Token
	// came from ("servers"), or "" when it came from the file's "token",
	// which any server gets.
	TokenServer string
}

// server names the Foundry the client talks to: the REST URL, or
// grpc://ADDRESS over gRPC. The config file keeps tokens per server, and
// audit verify its trust, under this name.
func (c *config) server() string {
	if c.GRPCAddr != "" {
		return "grpc://" + c.GRPCAddr
	}
	return c.URL
}

// configEnv names the config file when --config does not.
const configEnv = "FOUNDRY_CLI_CONFIG"

// serversKey is the config file's member that keeps a token per server
// (login and register write there): {"servers": {"https://…": {"token":
// "…"}}}. A token kept for one server is never sent to another, which the
// file's own "token" (any server's) would be when --url changes.
const serversKey = "servers"

// configFile is what a config file holds: the settings (the keys of the
// settings table) and the credentials kept per server.
type configFile struct {
	values map[string]string
	// servers maps a server (config.server) to its section's members:
	// "token" only.
	servers map[string]map[string]string
}

// serverToken is the token kept for server in its section; "" for none.
func (f configFile) serverToken(server string) string {
	return strings.TrimSpace(f.servers[server]["token"])
}

// setServerToken keeps token for server.
func (f *configFile) setServerToken(server, token string) {
	if f.servers == nil {
		f.servers = map[string]map[string]string{}
	}
	if f.servers[server] == nil {
		f.servers[server] = map[string]string{}
	}
	f.servers[server]["token"] = token
}

// forgetToken removes token from where resolveConfig found it: server's
// section (a section left empty goes too), or the file's own "token"
// when server is "". A token the file no longer holds there (changed
// since) is left alone.
func (f *configFile) forgetToken(server, token string) {
	if server == "" {
		if strings.TrimSpace(f.values["token"]) == token {
			delete(f.values, "token")
		}
		return
	}
	if f.serverToken(server) != token {
		return
	}
	delete(f.servers[server], "token")
	if len(f.servers[server]) == 0 {
		delete(f.servers, server)
	}
}

// setting is one connection setting: a flag, an environment variable and
// a config file key, in that order of precedence, then the default.
type setting struct {
	flag, env, key, def, usage string
	field                      func(*config) *string
}

// settings is the one table of the connection settings. The gRPC ones have
// FOUNDRY_CLI_ names because FOUNDRY_GRPC_ADDR and FOUNDRY_SERVICE_KEY are
// the server's (its listen address, its own key): a shell that runs both
// must not point the client at the server's settings by accident.
var settings = []setting{
	{"url", "FOUNDRY_URL", "url", "http://127.0.0.1:8080", "the gateway's address (REST)",
		func(c *config) *string { return &c.URL }},
	{"api-key", "FOUNDRY_API_KEY", "api_key", "", "administrator key, sent as X-API-Key (default against a loopback address: the local Foundry's data/admin.key)",
		func(c *config) *string { return &c.APIKey }},
	{"token", "FOUNDRY_TOKEN", "token", "", "a contributor's session token or an API token, sent as Authorization: Bearer",
		func(c *config) *string { return &c.Token }},
	{"grpc-addr", "FOUNDRY_CLI_GRPC_ADDR", "grpc_addr", "", "talk gRPC to the services at this address instead of REST",
		func(c *config) *string { return &c.GRPCAddr }},
	{"service-key", "FOUNDRY_CLI_SERVICE_KEY", "service_key", "", "the service key, for an operator's anonymous gRPC reads; a person's token (--token) or the administrator key (--api-key) needs none",
		func(c *config) *string { return &c.ServiceKey }},
}

// registerSettingFlags declares a flag per setting.
func registerSettingFlags(fs *pflag.FlagSet) {
	for _, s := range settings {
		fs.String(s.flag, s.def, s.usage+" ("+s.env+")")
	}
}

// resolveConfig applies the precedence flag > environment > config file >
// default to every setting. An empty environment variable counts as unset.
// flagConfig is the --config value (used only when that flag was given).
func resolveConfig(flags *pflag.FlagSet, flagConfig string, getenv func(string) string) (config, error) {
	path, file, err := readConfigFile(flags.Changed("config"), flagConfig, getenv)
	if err != nil {
		return config{}, usageError{err}
	}
	var c config
	for _, s := range settings {
		v := s.def
		fromFile := false
		if fv, ok := file.values[s.key]; ok {
			v, fromFile = fv, true
		}
		if ev := getenv(s.env); ev != "" {
			v, fromFile = ev, false
		}
		if flags.Changed(s.flag) {
			v, _ = flags.GetString(s.flag)
			fromFile = false
		}
		*s.field(&c) = strings.TrimSpace(v)
		if s.key == "token" && fromFile && c.Token != "" {
			c.TokenFile = path
		}
	}
	if err := c.validate(); err != nil {
		return config{}, usageError{err}
	}
	// The server's own section comes before the file's "token" (but after
	// the flag and the environment): which server it is is known only
	// now, once the URL or the gRPC address is settled.
	if t := file.serverToken(c.server()); t != "" && !flags.Changed("token") && getenv("FOUNDRY_TOKEN") == "" {
		c.Token, c.TokenFile, c.TokenServer = t, path, c.server()
	}
	c.localAdminKey(getenv)
	return c, nil
}

// localAdminKey reads the administrator key a Foundry on this machine
// generated (make run writes it to data/admin.key, or to
// $FOUNDRY_DATA_DIR/admin.key) when the client has no credential of its
// own and talks to a loopback address, as kubectl finds a local
// kubeconfig: on a laptop the CLI works without copying a key around. A
// remote Foundry never gets this file's key.
func (c *config) localAdminKey(getenv func(string) string) {
	if c.APIKey != "" || c.Token != "" || !c.loopback() {
		return
	}
	dir := getenv("FOUNDRY_DATA_DIR")
	if dir == "" {
		dir = "data"
	}
	path := filepath.Join(dir, "admin.key")
	raw, err := os.ReadFile(path)
	if key := strings.TrimSpace(string(raw)); err == nil && key != "" {
		c.APIKey, c.KeyFile = key, path
	}
}

// loopback reports whether the client talks to this machine.
func (c *config) loopback() bool {
	host := c.GRPCAddr
	if host != "" {
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
	} else if u, err := url.Parse(c.URL); err == nil {
		host = u.Hostname()
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validate checks what the transports need.
func (c *config) validate() error {
	if c.GRPCAddr != "" {
		// A person needs no service key: its token or the administrator
		// key travels as metadata, and the service verifies it.
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url %q is not an http:// or https:// address", c.URL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--url %q must not carry a query or fragment", c.URL)
	}
	c.URL = strings.TrimRight(c.URL, "/")
	return nil
}

// defaultConfigPath is $XDG_CONFIG_HOME/foundry/cli.json, else
// ~/.config/foundry/cli.json; "" when neither variable is set. A relative
// XDG_CONFIG_HOME is ignored, as the XDG specification asks.
func defaultConfigPath(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "foundry", "cli.json")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "foundry", "cli.json")
	}
	return ""
}

// configFilePath is the config file: --config when given (flagPath, ""
// for none), else FOUNDRY_CLI_CONFIG, else the default one; explicit is
// whether it was named (and so must exist to be read).
func configFilePath(given bool, flagPath string, getenv func(string) string) (path string, explicit bool) {
	if given {
		return flagPath, true
	}
	if p := getenv(configEnv); p != "" {
		return p, true
	}
	return defaultConfigPath(getenv), false
}

// readConfigFile reads the config file's settings and says which file it
// was. The file named by --config (given) or FOUNDRY_CLI_CONFIG must
// exist; the default one may be missing. --config= (empty) reads no file
// at all.
func readConfigFile(given bool, flagPath string, getenv func(string) string) (string, configFile, error) {
	path, explicit := configFilePath(given, flagPath, getenv)
	if path == "" {
		return "", configFile{}, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return path, configFile{}, nil
	}
	if err != nil {
		return "", configFile{}, fmt.Errorf("config file: %w", err)
	}
	file, err := parseConfigFile(path, raw)
	return path, file, err
}

// parseConfigFile reads a JSON object of string settings, e.g.
// {"url": "https://foundry.example.com", "token": "…"}, and the tokens
// kept per server ({"servers": {"https://…": {"token": "…"}}}). An
// unknown key is an error, so a misspelt one is not silently ignored.
func parseConfigFile(path string, raw []byte) (configFile, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return configFile{}, fmt.Errorf("config file %s: not a JSON object: %w", path, err)
	}
	if dec.More() {
		return configFile{}, fmt.Errorf("config file %s: more than one JSON value", path)
	}
	known := map[string]bool{serversKey: true}
	keys := []string{serversKey}
	for _, s := range settings {
		known[s.key] = true
		keys = append(keys, s.key)
	}
	sort.Strings(keys)
	out := configFile{values: make(map[string]string, len(doc))}
	for k, v := range doc {
		if !known[k] {
			return configFile{}, fmt.Errorf("config file %s: unknown setting %q (known: %s)", path, k, strings.Join(keys, ", "))
		}
		if k == serversKey {
			servers, err := parseServers(v)
			if err != nil {
				return configFile{}, fmt.Errorf("config file %s: %w", path, err)
			}
			out.servers = servers
			continue
		}
		s, ok := v.(string)
		if !ok {
			return configFile{}, fmt.Errorf("config file %s: %q must be a string", path, k)
		}
		out.values[k] = s
	}
	return out, nil
}

// parseServers reads the config file's "servers": an object of servers,
// each an object whose one known member is "token", a string.
func parseServers(v any) (map[string]map[string]string, error) {
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%q must be an object of servers, each {\"token\": \"…\"}", serversKey)
	}
	out := make(map[string]map[string]string, len(doc))
	for server, sv := range doc {
		section, ok := sv.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q of %q must be an object: {\"token\": \"…\"}", server, serversKey)
		}
		out[server] = make(map[string]string, len(section))
		for k, mv := range section {
			if k != "token" {
				return nil, fmt.Errorf("%q of %q: unknown member %q (known: token)", server, serversKey, k)
			}
			s, ok := mv.(string)
			if !ok {
				return nil, fmt.Errorf("%q of %q: %q must be a string", server, serversKey, k)
			}
			out[server][k] = s
		}
	}
	return out, nil
}

// updateConfigFile changes the settings of the config file at path (a
// missing file has none) and writes it back: atomically (a temporary file
// renamed over it, so a crash leaves the old file or the new one, never
// half of one), readable by the user alone, since it may hold a token. A
// symbolic link is followed, so a config file kept elsewhere stays there.
// The file must be one the client reads: an unknown key stops the update
// rather than being dropped.
func updateConfigFile(path string, change func(file *configFile)) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	file := configFile{values: map[string]string{}}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if file, err = parseConfigFile(path, raw); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("config file: %w", err)
	}
	change(&file)
	doc := make(map[string]any, len(file.values)+1)
	for k, v := range file.values {
		doc[k] = v
	}
	if len(file.servers) > 0 {
		doc[serversKey] = file.servers
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(append(out, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}
