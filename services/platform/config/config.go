// Package config reads settings the twelve-factor way: every setting is a
// command-line flag with a default, and an environment variable overrides the
// default (an explicit flag wins over both).
package config

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

// FlagSet is a flag.FlagSet whose flags each have an environment variable.
type FlagSet struct {
	fs   *flag.FlagSet
	envs map[string]string // flag name -> environment variable
	// given holds the settings the flags or the environment named at all,
	// even with an empty value (see Given).
	given map[string]bool
}

// New returns an empty FlagSet for the named program.
func New(program string) *FlagSet {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	return &FlagSet{fs: fs, envs: map[string]string{}, given: map[string]bool{}}
}

// Flags exposes the underlying flag set (for usage output).
func (s *FlagSet) Flags() *flag.FlagSet { return s.fs }

func (s *FlagSet) bind(name, env string) {
	if _, dup := s.envs[name]; dup {
		panic("config: flag defined twice: " + name)
	}
	s.envs[name] = env
}

func (s *FlagSet) usage(env, usage string) string {
	return fmt.Sprintf("%s (env %s)", usage, env)
}

// String defines a string setting.
func (s *FlagSet) String(p *string, name, env, def, usage string) {
	s.bind(name, env)
	s.fs.StringVar(p, name, def, s.usage(env, usage))
}

// Int defines an integer setting.
func (s *FlagSet) Int(p *int, name, env string, def int, usage string) {
	s.bind(name, env)
	s.fs.IntVar(p, name, def, s.usage(env, usage))
}

// Float defines a floating-point setting.
func (s *FlagSet) Float(p *float64, name, env string, def float64, usage string) {
	s.bind(name, env)
	s.fs.Float64Var(p, name, def, s.usage(env, usage))
}

// Bool defines a boolean setting.
func (s *FlagSet) Bool(p *bool, name, env string, def bool, usage string) {
	s.bind(name, env)
	s.fs.BoolVar(p, name, def, s.usage(env, usage))
}

// Duration defines a duration setting ("90s", "6h").
func (s *FlagSet) Duration(p *time.Duration, name, env string, def time.Duration, usage string) {
	s.bind(name, env)
	s.fs.DurationVar(p, name, def, s.usage(env, usage))
}

// Parse reads args, then applies environment variables (looked up with
// getenv) to every flag not given explicitly. It returns the remaining
// positional arguments. getenv cannot tell an empty variable from an absent
// one; ParseLookup can.
func (s *FlagSet) Parse(args []string, getenv func(string) string) ([]string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	return s.ParseLookup(args, func(env string) (string, bool) {
		v := getenv(env)
		return v, v != ""
	})
}

// ParseLookup is Parse with an os.LookupEnv-style lookup (nil means
// os.LookupEnv), which also tells Given about variables set to nothing.
func (s *FlagSet) ParseLookup(args []string, lookupEnv func(string) (string, bool)) ([]string, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if err := s.fs.Parse(args); err != nil {
		return nil, err
	}
	explicit := map[string]bool{}
	s.fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true; s.given[f.Name] = true })
	for name, env := range s.envs {
		if explicit[name] {
			continue
		}
		raw, present := lookupEnv(env)
		if present {
			s.given[name] = true
		}
		v, ok := lookup(raw)
		if !ok {
			continue
		}
		if err := s.fs.Set(name, v); err != nil {
			return nil, fmt.Errorf("environment %s=%q: %w", env, v, err)
		}
	}
	return s.fs.Args(), nil
}

// Given reports whether the setting was named at all: its flag on the
// command line, or its environment variable present, even empty. Most
// settings treat empty as "use the default"; a secret must not, because an
// empty value there is a deployment mistake (an empty Kubernetes Secret),
// not a request for the default.
func (s *FlagSet) Given(name string) bool { return s.given[name] }

// lookup treats an empty variable as unset, so `FOO= make run` means default.
func lookup(raw string) (string, bool) {
	v := strings.TrimSpace(raw)
	return v, v != ""
}
