package whatsapp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOperationsListsEveryOp: an operation defined (a function Op… in this
// package) but missing from Operations would run on one process and be
// refused as unknown when forwarded to another; two of one name would run
// the wrong one.
func TestOperationsListsEveryOp(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var defined []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Op") && len(fn.Name.Name) > 2 &&
				fn.Name.Name[2] >= 'A' && fn.Name.Name[2] <= 'Z' {
				defined = append(defined, fn.Name.Name)
			}
		}
	}
	listed := map[string]bool{}
	for _, o := range Operations() {
		if listed[o.Name()] {
			t.Errorf("two operations are named %q", o.Name())
		}
		listed[o.Name()] = true
	}
	if len(listed) != len(defined) {
		slices.Sort(defined)
		t.Errorf("%d operations defined (%s), %d listed in Operations: add the missing ones", len(defined), strings.Join(defined, ", "), len(listed))
	}
}
