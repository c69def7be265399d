// Package logging builds the zap logger every Foundry process uses: JSON lines
// in production, a readable console format on a laptop.
package logging

import (
	"fmt"
	"os"

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
	return cfg.Build()
}
