package textindex_test

import (
	"fmt"

	"memsvc.dev/memsvc/pkg/engine/textindex"
)

func ExampleTokenize() {
	fmt.Printf("%q\n", textindex.Tokenize("The deployments were rotated: see pkg/store"))
	fmt.Printf("%q\n", textindex.Tokenize("東京都庁で pebble を使う"))
	// Output:
	// ["deploy" "rotat" "see" "pkg" "store"]
	// ["東京" "京都" "都庁" "庁で" "pebbl" "を使" "使う"]
}
