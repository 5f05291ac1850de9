package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestRankevalPipelines runs the baseline and the chosen pipeline (without
// WordNet, which the test machine may lack) on both development sets: the
// chosen pipeline must beat plain BM25 by a wide margin on each, and
// answer the same way twice.
func TestRankevalPipelines(t *testing.T) {
	all, err := chosenPipeline()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"dialogue", "agent"} {
		ds, err := loadDataset("../../testdata/recall/" + f + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		e := newEvaluator(ds)
		base := score(ds.Questions, e.run(&baseline, 10))
		first := e.run(&all, 10)
		got := score(ds.Questions, first)
		t.Logf("%s: bm25 hit@5 %.3f MRR %.3f, chosen hit@5 %.3f MRR %.3f", f, base.Hit5, base.MRR, got.Hit5, got.MRR)
		if got.Hit5 < base.Hit5+0.15 || got.MRR < base.MRR+0.1 {
			t.Errorf("%s: chosen hit@5 %.3f MRR %.3f, bm25 %.3f %.3f", f, got.Hit5, got.MRR, base.Hit5, base.MRR)
		}
		if again := e.run(&all, 10); !slices.EqualFunc(first, again, slices.Equal) {
			t.Errorf("%s: the chosen pipeline answered differently the second time", f)
		}
	}
}

func TestParsePipeline(t *testing.T) {
	p, err := parsePipeline("x:function,before=0.5,b=0.4", baseline)
	if err != nil || p.Name != "x" || !p.Function || p.Before != 0.5 || p.B != 0.4 || p.K1 != baseline.K1 {
		t.Errorf("got %+v, %v", p, err)
	}
	c, err := parsePipeline("chosen:prox=0", baseline)
	if err != nil || c.Prox != 0 || c.Before != 1 || !c.Function {
		t.Errorf("chosen with proximity off: %+v, %v", c, err)
	}
	for _, bad := range []string{"x:nosuch=1", "x:b=high"} {
		if _, err := parsePipeline(bad, baseline); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestPipelineKeys: every setting key reaches its field, as a number, a
// count or a switch, and "name" is refused.
func TestPipelineKeys(t *testing.T) {
	var p pipeline
	for k, field := range p.fields() {
		if err := p.set(k + "=3.5"); err != nil {
			t.Errorf("%s: %v", k, err)
			continue
		}
		switch f := field.(type) {
		case *float64:
			if *f != 3.5 {
				t.Errorf("%s = %v, want 3.5", k, *f)
			}
		case *int:
			if *f != 3 {
				t.Errorf("%s = %v, want 3", k, *f)
			}
		case *bool:
			if !*f {
				t.Errorf("%s is off after %s=3.5", k, k)
			}
		default:
			t.Errorf("%s sets a %T", k, field)
		}
	}
	if err := p.set("name=1"); err == nil || !strings.Contains(err.Error(), "before the colon") {
		t.Errorf("name=1: %v", err)
	}
}

func TestRankevalCommand(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(t.Context(), []string{"rankeval", "--dataset", "../../testdata/recall/agent.jsonl", "--pipeline", "bm25", "--pipeline", "fn:function"}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	for _, want := range []string{"| bm25 | 0.298 | 0.475 |", "| fn | 0.343 | 0.552 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(t.Context(), []string{"rankeval"}, &out, &errb); err == nil {
		t.Error("no --dataset: no error")
	}
}
