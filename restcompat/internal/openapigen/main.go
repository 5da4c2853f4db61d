// Command openapigen writes the OpenAPI description of the REST contract,
// generated from restcompat's route table, to the file the server embeds
// (make generate runs it; make check-generated fails when the committed
// file differs).
//
//	go run ./restcompat/internal/openapigen -o restcompat/openapi.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/wagraph/wagraph/restcompat"
)

func main() {
	out := flag.String("o", "restcompat/openapi.json", "the file to write")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	doc, err := restcompat.Document()
	if err != nil {
		return err
	}
	return os.WriteFile(path, doc, 0o644)
}
