// Package logging builds the zap logger every Foundry process uses: JSON lines
// in production, a readable console format on a laptop.
package logging

import (
	"fmt"
	"os"
	"time"

	"github.com/mattn/go-isatty"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New returns a logger. format is "json", "console" or "auto" (console when
// stderr is a terminal); level is a zap level name such as "info".
func New(format, level string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("log level %q: %w", level, err)
	}
	if format == "auto" {
		format = "json"
		if isatty.IsTerminal(os.Stderr.Fd()) {
			format = "console"
		}
	}
	var cfg zap.Config
	switch format {
	case "json":
		cfg = zap.NewProductionConfig()
		cfg.EncoderConfig.TimeKey = "ts"
		cfg.EncoderConfig.EncodeTime = zapcore.RFC3339NanoTimeEncoder
	case "console":
		cfg = zap.NewDevelopmentConfig()
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalColorLevelEncoder
		cfg.EncoderConfig.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
		cfg.DisableStacktrace = true
	default:
		return nil, fmt.Errorf("log format %q: want json, console or auto", format)
	}
	cfg.Level = zap.NewAtomicLevelAt(lvl)
	cfg.Sampling = nil
	if format == "console" {
		return cfg.Build() // a person reads it as it happens: every line at once
	}
	// JSON lines go to a collector, not a person: they are buffered and
	// written every second (or every 256 KiB), one write for many lines,
	// instead of a system call per line — on a busy gateway, one per request
	// (its access line). Sync flushes: the process calls it when it stops
	// (app's Process.Stop, and when a start fails), and zap itself syncs
	// after an entry above error (DPanic, Panic, Fatal). What a crash that
	// is none of those loses is at most the last second's lines.
	out, closeOut, err := zap.Open(cfg.OutputPaths...)
	if err != nil {
		return nil, fmt.Errorf("log output: %w", err)
	}
	errOut, _, err := zap.Open(cfg.ErrorOutputPaths...)
	if err != nil {
		closeOut()
		return nil, fmt.Errorf("log error output: %w", err)
	}
	buffered := &zapcore.BufferedWriteSyncer{WS: out, Size: 256 << 10, FlushInterval: time.Second}
	core := zapcore.NewCore(zapcore.NewJSONEncoder(cfg.EncoderConfig), buffered, cfg.Level)
	return zap.New(core, zap.ErrorOutput(errOut), zap.AddCaller(), zap.AddStacktrace(zapcore.ErrorLevel)), nil
}
