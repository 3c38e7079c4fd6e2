// Command gen writes protocol/schema.json (go generate in protocol/).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/zqagent/sidecar/protocol/internal/schemagen"
)

func main() {
	out := flag.String("o", "schema.json", "output file")
	dir := flag.String("src", ".", "directory of package protocol's sources")
	flag.Parse()
	b, err := schemagen.Build(*dir)
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
