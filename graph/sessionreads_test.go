package graph_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const (
	modulePath  = "github.com/wagraph/wagraph"
	entPath     = modulePath + "/ent"
	sessionPath = modulePath + "/ent/session"
)

// goList runs the go command's list in this package's directory.
func goList(t *testing.T, args ...string) []byte {
	t.Helper()
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		if goCmd, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go command to list the packages with: %v", err)
		}
	}
	cmd := exec.Command(goCmd, append([]string{"list"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

// TestSessionsOnlyThroughTheService: graph reads and writes sessions only
// through internal/sessions' Service (its Sessions): it imports no ent
// package for sessions, and uses nothing of the ent client's for them (the
// client's Session field, SessionQuery, SessionCreate, …), whatever it is
// reached through. The records the service returns (ent.Session) it may
// read.
//
// `go list -deps` of graph lists ent/session all the same: the ent client
// package, which the service and every other store graph calls import,
// imports each table's package. So the rule is checked on graph's own
// code: its imports, and every object its files use, type-checked.
func TestSessionsOnlyThroughTheService(t *testing.T) {
	for _, imp := range strings.Fields(string(goList(t, "-f", `{{join .Imports " "}}`, "."))) {
		if imp == sessionPath {
			t.Errorf("graph imports %s: read sessions through internal/sessions", imp)
		}
	}

	// Export data of every dependency, to type-check graph's files against.
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(goList(t, "-export", "-deps", "-f", `{{.ImportPath}} {{.Export}}`, ".")))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok && file != "" {
			exports[path] = file
		}
	}
	names := strings.Fields(string(goList(t, "-f", `{{join .GoFiles " "}}`, ".")))
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := (&types.Config{Importer: imp}).Check(modulePath+"/graph", fset, files, info); err != nil {
		t.Fatalf("type-check graph: %v", err)
	}
	for id, obj := range info.Uses {
		if forbidden(obj) {
			t.Errorf("%s: graph uses %s of package %s: read sessions through internal/sessions", fset.Position(id.Pos()), obj.Name(), obj.Pkg().Path())
		}
	}
	if len(info.Uses) < 1000 {
		t.Fatalf("only %d uses found in graph: the check looked at nothing", len(info.Uses))
	}
}

// forbidden reports whether obj is ent's way to sessions: anything of
// ent/session, the client's Session field, or one of ent's Session*
// builders and queries, or the record's own queries and update (not the
// record, ent.Session, its fields and its other methods).
func forbidden(obj types.Object) bool {
	if obj == nil || obj.Pkg() == nil {
		return false
	}
	switch obj.Pkg().Path() {
	case sessionPath:
		return true
	case entPath:
	default:
		return false
	}
	switch o := obj.(type) {
	case *types.TypeName:
		return strings.HasPrefix(o.Name(), "Session") && o.Name() != "Session"
	case *types.Var:
		return o.IsField() && o.Name() == "Session" && fieldOfClient(o)
	case *types.Func:
		recv := o.Type().(*types.Signature).Recv()
		if recv == nil {
			return false
		}
		name := types.TypeString(recv.Type(), nil)
		if strings.HasSuffix(name, "/ent.Session") { // the record: its reads of other tables or its update
			return strings.HasPrefix(o.Name(), "Query") || o.Name() == "Update" || o.Name() == "Unwrap"
		}
		return strings.Contains(name, "/ent.Session")
	}
	return false
}

// fieldOfClient reports whether v is a field of ent.Client (its Session:
// the table's client).
func fieldOfClient(v *types.Var) bool {
	client := v.Pkg().Scope().Lookup("Client")
	if client == nil {
		return false
	}
	st, ok := client.Type().Underlying().(*types.Struct)
	if !ok {
		return false
	}
	for f := range st.Fields() {
		if f == v {
			return true
		}
	}
	return false
}
