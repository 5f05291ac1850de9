package servercmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v4"

	"memsvc.dev/memsvc/pkg/cli"
	"memsvc.dev/memsvc/pkg/client"
	"memsvc.dev/memsvc/pkg/config"
	"memsvc.dev/memsvc/pkg/server"
)

func (r *root) serveCmd() *ff.Command {
	fs := r.subFlags("serve")
	port := cli.Port(fs, "port", "HTTP port (default: http.port, 8420; 0 picks a free port)")
	grpcPort := cli.Port(fs, "grpc-port", "also serve gRPC on this port (default: grpc.port, off; 0 picks a free port)")
	return &ff.Command{
		Name:      "serve",
		Usage:     "memsvc serve [--port N] [--grpc-port N] [--config FILE] [--data-dir DIR]",
		ShortHelp: "run the server",
		LongHelp: "Runs memsvc: the HTTP API on http.bind_address:http.port, background decay and\n" +
			"dream processing, and the audit log. SIGINT or SIGTERM stops it gracefully.\n" +
			"It watches its configuration file and reloads it on change or SIGHUP: API\n" +
			"keys, rate limits, log level and the gRPC certificate change without a\n" +
			"restart; other keys are logged as needing one.\n" +
			"The start-up banner and all logs go to stderr.\n\n" +
			"Examples:\n" +
			"  memsvc serve\n" +
			"  memsvc serve --config /etc/memsvc/memsvc.toml\n" +
			"  curl -s http://127.0.0.1:8420/v1/introspect/stats",
		Flags: fs,
		Exec: cli.NoArgs("serve takes no arguments", func(ctx context.Context) error {
			overrides := portOverrides(port, "http.port", "--port")
			overrides = append(overrides, portOverrides(grpcPort, "grpc.port", "--grpc-port")...)
			cfg, err := r.loadConfig(overrides...)
			if err != nil {
				return err
			}
			level := new(slog.LevelVar)
			level.Set(cli.LogLevel(cfg.Log.Level))
			log := cli.NewLevelLogger(r.stderr, level, cfg.Log.Format)
			// SIGHUP reloads the configuration instead of ending the
			// process.
			hangup := make(chan os.Signal, 1)
			signal.Notify(hangup, syscall.SIGHUP)
			defer signal.Stop(hangup)
			err = server.New(cfg, server.Options{
				Logger: log, Banner: r.stderr, Version: cli.Version,
				Load:        func() (*config.Config, error) { return r.loadConfig(overrides...) },
				Hangup:      hangup,
				SetLogLevel: func(name string) { level.Set(cli.LogLevel(name)) },
			}).Run(ctx)
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("%w: another process listens on that port; stop it, or pick another port with --port (HTTP, http.port) or --grpc-port (gRPC, grpc.port)", err)
			}
			return err
		}),
	}
}

func (r *root) healthcheckCmd() *ff.Command {
	fs := r.subFlags("healthcheck")
	port := cli.Port(fs, "port", "HTTP port of the server (default: http.port, 8420)")
	return &ff.Command{
		Name:      "healthcheck",
		Usage:     "memsvc healthcheck [--port N]",
		ShortHelp: "check that a local server answers /health (exit 0 when healthy)",
		LongHelp: "Probes GET /health of the server configured on this machine (http.bind_address,\n" +
			"or 127.0.0.1 when it listens on all addresses). Prints ok and exits 0 when\n" +
			"healthy; exits 1 otherwise. Meant for process supervisors and containers.",
		Flags: fs,
		Exec: cli.NoArgs("healthcheck takes no arguments", func(ctx context.Context) error {
			cfg, err := r.loadConfig(portOverrides(port, "http.port", "--port")...)
			if err != nil {
				return err
			}
			host := cfg.HTTP.BindAddress
			if host == "0.0.0.0" || host == "::" {
				host = "127.0.0.1"
			}
			c, err := client.New("http://"+net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(int(cfg.HTTP.Port))), client.Options{Timeout: 5 * time.Second})
			if err != nil {
				return err
			}
			if err := c.Health(ctx); err != nil {
				return fmt.Errorf("unhealthy: %w", err)
			}
			_, err = fmt.Fprintln(r.stdout, "ok")
			return err
		}),
	}
}

// portOverrides turns a --port style flag, when given, into the
// configuration override of key.
func portOverrides(port func() (uint16, bool), key, flag string) []config.Override {
	p, ok := port()
	if !ok {
		return nil
	}
	return []config.Override{{Key: key, Value: strconv.Itoa(int(p)), Flag: flag}}
}
