// Command protogen regenerates the Go code of the repository's .proto files
// (pkg/grpcapi/memsvcpb) with the pinned plugins of the tools module. Run it
// from the tools directory, or through `go generate ./pkg/grpcapi`:
//
//	cd tools && go run ./cmd/protogen
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"memsvc.dev/memsvc/tools/internal/protogen"
)

func main() {
	cfg := protogen.Default()
	root := flag.String("root", "..", "root of module memsvc.dev/memsvc, where generated paths start")
	flag.StringVar(&cfg.ProtoDir, "proto", cfg.ProtoDir, "import root of the .proto files")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	files, err := protogen.Generate(ctx, cfg)
	if err == nil {
		err = protogen.Write(*root, files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "protogen:", err)
		os.Exit(1)
	}
}
