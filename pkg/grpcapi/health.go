package grpcapi

import (
	"context"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// healthService is the standard health service with one change: a Watch
// stream ends (with OK) once it has delivered NOT_SERVING. This server
// reports NOT_SERVING only when it shuts down, and a graceful stop waits
// for every open stream, so without this one client watching health (as
// gRPC's client-side health checking does) would hold every shutdown until
// its deadline.
type healthService struct {
	*health.Server
}

func (h healthService) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	w := &endingWatch{Health_WatchServer: stream, ctx: ctx, cancel: cancel}
	err := h.Server.Watch(req, w)
	if w.ended {
		return nil
	}
	return err
}

// endingWatch ends the watch after a NOT_SERVING answer went out.
type endingWatch struct {
	healthpb.Health_WatchServer
	ctx    context.Context
	cancel context.CancelFunc
	ended  bool
}

func (w *endingWatch) Context() context.Context { return w.ctx }

func (w *endingWatch) Send(m *healthpb.HealthCheckResponse) error {
	if err := w.Health_WatchServer.Send(m); err != nil {
		return err
	}
	if m.GetStatus() == healthpb.HealthCheckResponse_NOT_SERVING {
		w.ended = true
		w.cancel()
	}
	return nil
}
