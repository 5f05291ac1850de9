package textindex_test

import (
	"errors"
	"fmt"
	"log"

	"memsvc.dev/memsvc/pkg/engine/textindex"
	"memsvc.dev/memsvc/pkg/memory"
	"memsvc.dev/memsvc/pkg/store"
)

func ExampleTokenize() {
	fmt.Printf("%q\n", textindex.Tokenize("The deployments were rotated: see pkg/store"))
	fmt.Printf("%q\n", textindex.Tokenize("東京都庁で pebble を使う"))
	// Output:
	// ["deploy" "rotat" "see" "pkg" "store"]
	// ["東京" "京都" "都庁" "庁で" "pebbl" "を使" "使う"]
}

func Example() {
	db, err := store.OpenInMemory()
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	prefix := []byte{store.NSDerived, 'c'}
	records := map[memory.ID]string{
		memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8057"): "Rotated the signing keys after the leak.",
		memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8058"): "The user prefers short answers.",
	}

	// Start-up: open, and rebuild when the index is stale or missing.
	ix, err := textindex.Open(db, prefix)
	if errors.Is(err, textindex.ErrStale) {
		ix, err = textindex.Rebuild(db, prefix, func(add textindex.AddFunc) error {
			for id, text := range records {
				if err := add(id, []byte{1}, text); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		log.Fatal(err)
	}

	// Serving: index a record in the batch that stores it.
	id := memory.MustParseID("01890a5d-ac96-774b-bcce-b302099a8059")
	b := db.NewBatch()
	defer b.Close()
	// ... b.PutRecord(rec) ...
	change, err := ix.Put(b, id, []byte{2}, "Key rotation is due every 90 days.", "rotation policy")
	if err != nil {
		log.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		log.Fatal(err)
	}
	ix.Apply(change)

	res, err := ix.Search(textindex.Query{Text: "rotating keys", Limit: 10})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("total", res.Total)
	for _, h := range res.Hits {
		fmt.Printf("%s attrs=%v score>0=%v\n", h.Doc, h.Attrs, h.Score > 0)
	}
	// Output:
	// total 2
	// 01890a5d-ac96-774b-bcce-b302099a8057 attrs=[1] score>0=true
	// 01890a5d-ac96-774b-bcce-b302099a8059 attrs=[2] score>0=true
}
