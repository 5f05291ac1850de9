package grpcapi

import (
	"errors"
	"io"

	"google.golang.org/grpc"

	pb "memsvc.dev/memsvc/pkg/grpcapi/memsvcpb"
	"memsvc.dev/memsvc/pkg/memory"
)

// exportChunkBytes is the size of the data messages of an export stream.
const exportChunkBytes = 64 << 10

// Export streams the archive as the service writes it, in chunks, and ends
// with the summary. A failure after the first chunk ends the stream with an
// error status and no summary, so a client cannot take a truncated archive
// for a complete one. Nothing is buffered beyond one chunk.
func (h *service) Export(in *pb.ExportRequest, stream grpc.ServerStreamingServer[pb.ExportResponse]) error {
	ctx := stream.Context()
	var d decoder
	req := toModelExportRequest(&d, "", in)
	if d.err != nil {
		return h.s.status(ctx, d.err)
	}
	if err := scopeOf(ctx).CheckExport(req.Namespaces); err != nil {
		return h.s.status(ctx, err)
	}
	w := &chunkWriter{send: func(b []byte) error {
		return stream.Send(&pb.ExportResponse{Part: &pb.ExportResponse_Data{Data: b}})
	}}
	resp, err := h.s.svc.Export(ctx, req, w)
	if err == nil && resp == nil {
		err = errNoResult
	}
	if err == nil {
		err = w.flush()
	}
	if w.sendErr != nil {
		return w.sendErr // the client went away; its status says why
	}
	if err != nil {
		return h.s.status(ctx, serviceError(err))
	}
	var e encoder
	summary := toProtoExportSummary(&e, resp)
	return stream.Send(&pb.ExportResponse{Part: &pb.ExportResponse_Summary{Summary: summary}})
}

// chunkWriter collects writes into chunks of exportChunkBytes. Each chunk
// is a fresh slice: a sent message must not change afterwards.
type chunkWriter struct {
	send    func([]byte) error
	buf     []byte
	sendErr error
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	if w.sendErr != nil {
		return 0, w.sendErr
	}
	n := len(p)
	for len(p) > 0 {
		if w.buf == nil {
			w.buf = make([]byte, 0, exportChunkBytes)
		}
		k := min(len(p), exportChunkBytes-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == exportChunkBytes {
			if err := w.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

func (w *chunkWriter) flush() error {
	if w.sendErr != nil || len(w.buf) == 0 {
		return w.sendErr
	}
	b := w.buf
	w.buf = nil
	if err := w.send(b); err != nil {
		w.sendErr = err
	}
	return w.sendErr
}

// Import reads the options from the first message and hands the service a
// reader over the data of all messages. Problems of the stream itself (a
// client that goes away, options repeated, an archive over the size limit)
// are reported as such, not as whatever the service makes of a short read.
func (h *service) Import(stream grpc.ClientStreamingServer[pb.ImportRequest, pb.ImportResponse]) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return h.s.status(ctx, memory.Invalid("options", "the stream is empty: the first message must carry the import options"))
	}
	if err != nil {
		return err
	}
	if first.GetOptions() == nil {
		return h.s.status(ctx, memory.Invalid("options", "required in the first message of the stream"))
	}
	var d decoder
	req := toModelImportOptions(&d, "options", first.GetOptions())
	if d.err != nil {
		return h.s.status(ctx, d.err)
	}
	if err := scopeOf(ctx).CheckImport(req.PreserveNamespaces); err != nil {
		return h.s.status(ctx, err)
	}
	r := &importReader{recv: stream.Recv, pending: first.GetData(), max: h.s.maxImport}
	r.n = int64(len(r.pending))
	resp, err := h.s.svc.Import(ctx, req, r)
	switch {
	case r.err != nil:
		return h.s.status(ctx, r.err)
	case r.n > r.max:
		return h.s.status(ctx, r.tooLarge())
	case err != nil && r.n == 0 && r.eof:
		return h.s.status(ctx, memory.Invalid("data", "the archive is empty; send its bytes in the data of the stream's messages"))
	case err != nil:
		return h.s.status(ctx, serviceError(err))
	case resp == nil:
		return h.s.status(ctx, errNoResult)
	}
	var e encoder
	return stream.SendAndClose(toProtoImportResponse(&e, resp))
}

// importReader reads the data of an import stream.
type importReader struct {
	recv    func() (*pb.ImportRequest, error)
	pending []byte
	n       int64 // bytes received
	max     int64
	eof     bool
	err     error // a problem of the stream, reported instead of the service's error
}

func (r *importReader) tooLarge() error {
	return memory.Errorf(memory.CodeContentTooLarge, "the archive exceeds the import limit of %d bytes; the server's max_import_bytes setting raises it", r.max)
}

func (r *importReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		switch {
		case r.err != nil:
			return 0, r.err
		case r.eof:
			return 0, io.EOF
		}
		msg, err := r.recv()
		switch {
		case errors.Is(err, io.EOF):
			r.eof = true
			continue
		case err != nil:
			r.err = err
		case msg.GetOptions() != nil:
			r.err = memory.Invalid("options", "allowed only in the first message of the stream")
		default:
			r.pending = msg.GetData()
			r.n += int64(len(r.pending))
			if r.n > r.max {
				r.err = r.tooLarge()
			}
		}
	}
	if r.n > r.max {
		return 0, r.tooLarge()
	}
	k := copy(p, r.pending)
	r.pending = r.pending[k:]
	return k, nil
}
