package graph

// The bounds a GraphQL document meets before it costs anything: its size is
// measured on the parsed document without expanding fragments, its
// validation runs under a deadline, and its operation is charged to the
// caller's rate limit, all before gqlgen validates or executes it.

import (
	"context"
	"errors"
	"math"
	"runtime"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"github.com/wagraph/wagraph/internal/fault"
)

// DocumentLimits bound one GraphQL document.
type DocumentLimits struct {
	// Tokens caps the lexer's tokens: parsing is linear in them.
	Tokens int
	// Selections caps the fields, fragment spreads and inline fragments
	// written in the document. Validation compares fields pairwise
	// (OverlappingFieldsCanBeMerged), so its cost grows with the square of
	// this number.
	Selections int
	// Expanded caps the selections of one operation with every fragment
	// spread replaced by its fragment. It is computed once per fragment,
	// so a fragment spread twice in each of 40 nested fragments is refused
	// without ever expanding 2^40 of anything.
	Expanded int
	// Depth caps the nesting of fields, through fragments.
	Depth int
	// SameName caps the fields of one response name in one selection set,
	// counting those its fragments bring (each fragment once, as
	// validation collects them). Validation compares such fields
	// pairwise, and their sub-selections pairwise again.
	SameName int
	// Validate is the deadline of validation.
	Validate time.Duration
}

// DefaultDocumentLimits leave room for any hand-written query and for
// GraphiQL's introspection query (about 100 selections, 300 expanded, depth
// 13), and keep the worst document within them to milliseconds of
// validation (BenchmarkWorstDocument).
var DefaultDocumentLimits = DocumentLimits{
	Tokens:     15_000,
	Selections: 500,
	Expanded:   2_000,
	Depth:      15,
	SameName:   5,
	Validate:   time.Second,
}

// OperationCharger charges n operations to the caller's rate limit, or
// says when there is no room for them.
type OperationCharger interface {
	ChargeOperations(ctx context.Context, n int) error
}

// documentGuard is the gqlgen extension that enforces DocumentLimits and the
// per-operation rate limit. It runs before gqlgen parses the query: a
// document it accepts is parsed and validated here once and handed to
// gqlgen through the query cache, so gqlgen neither parses nor validates
// it again.
type documentGuard struct {
	schema  *ast.Schema
	cache   graphql.Cache[*ast.QueryDocument]
	limits  DocumentLimits
	rules   func() *rules.Rules
	charger OperationCharger // nil: no rate limit
	// slots bounds the validations running at once: a validation that
	// overran its deadline keeps its slot until it ends, so abandoned work
	// can never pile up beyond the machine's cores.
	slots chan struct{}
}

func newDocumentGuard(schema *ast.Schema, cache graphql.Cache[*ast.QueryDocument], limits DocumentLimits, suggestions bool, charger OperationCharger) *documentGuard {
	return &documentGuard{
		schema: schema, cache: cache, limits: limits, charger: charger,
		rules: func() *rules.Rules { return validationRules(suggestions) },
		slots: make(chan struct{}, runtime.GOMAXPROCS(0)),
	}
}

// validationRules are gqlgen's: its executor swaps the suggestion rules the
// same way, so a document validated here is held to exactly its rules.
func validationRules(suggestions bool) *rules.Rules {
	rs := rules.NewDefaultRules()
	if !suggestions {
		rs.RemoveRule("FieldsOnCorrectType")
		rs.AddRule(rules.FieldsOnCorrectTypeRuleWithoutSuggestions.Name, rules.FieldsOnCorrectTypeRuleWithoutSuggestions.RuleFunc)
		rs.RemoveRule("ScalarLeafs")
		rs.AddRule(rules.ScalarLeafsRuleWithoutSuggestions.Name, rules.ScalarLeafsRuleWithoutSuggestions.RuleFunc)
	}
	return rs
}

var (
	_ graphql.HandlerExtension          = (*documentGuard)(nil)
	_ graphql.OperationParameterMutator = (*documentGuard)(nil)
)

func (*documentGuard) ExtensionName() string                   { return "DocumentGuard" }
func (*documentGuard) Validate(graphql.ExecutableSchema) error { return nil }
func (g *documentGuard) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	doc, err := g.document(ctx, params.Query)
	if err != nil {
		return err
	}
	op := doc.Operations.ForName(params.OperationName)
	if op == nil || g.charger == nil {
		return nil // gqlgen names the missing operation
	}
	if err := g.charger.ChargeOperations(ctx, operationCost(doc, op)); err != nil {
		return presentFault(err)
	}
	return nil
}

// document returns the parsed and validated document of query.
func (g *documentGuard) document(ctx context.Context, query string) (*ast.QueryDocument, *gqlerror.Error) {
	if doc, ok := g.cache.Get(ctx, query); ok {
		return doc, nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, g.limits.Tokens)
	if err != nil {
		var gerr *gqlerror.Error
		if !errors.As(err, &gerr) {
			gerr = gqlerror.Errorf("%s", err)
		}
		errcode.Set(gerr, errcode.ParseFailed)
		return nil, gerr
	}
	if err := g.measure(doc); err != nil {
		return nil, presentFault(err)
	}
	if errs, err := g.validate(ctx, doc); err != nil {
		return nil, presentFault(err)
	} else if len(errs) > 0 {
		// gqlgen validates again and reports every error; a document that
		// fails is not cached.
		return doc, nil
	}
	g.cache.Add(ctx, query, doc)
	return doc, nil
}

// validate runs gqlgen's validation rules within the deadline.
func (g *documentGuard) validate(ctx context.Context, doc *ast.QueryDocument) (gqlerror.List, error) {
	timer := time.NewTimer(g.limits.Validate)
	defer timer.Stop()
	tooSlow := fault.New(fault.Invalid, "the document could not be validated within %s: make it smaller", g.limits.Validate)
	select {
	case g.slots <- struct{}{}:
	case <-timer.C:
		return nil, tooSlow
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	done := make(chan gqlerror.List, 1)
	go func() { // ends with the validation, bounded by the limits
		defer func() { <-g.slots }()
		done <- validator.ValidateWithRules(g.schema, doc, g.rules())
	}()
	select {
	case errs := <-done:
		return errs, nil
	case <-timer.C:
		return nil, tooSlow
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// measure refuses a document over the limits. It reads the document once
// and each fragment once.
func (g *documentGuard) measure(doc *ast.QueryDocument) error {
	written := 0
	for _, op := range doc.Operations {
		written += countSelections(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		written += countSelections(f.SelectionSet)
	}
	if written > g.limits.Selections {
		return fault.New(fault.Invalid, "the document has %d selections; the limit is %d fields, fragment spreads and inline fragments per document", written, g.limits.Selections)
	}
	if err := g.sameNames(doc); err != nil {
		return err
	}
	m := &expansion{doc: doc, memo: map[string]extent{}, visiting: map[string]bool{}}
	for _, op := range doc.Operations {
		e, err := m.of(op.SelectionSet)
		if err != nil {
			return err
		}
		if e.size > g.limits.Expanded {
			return fault.New(fault.Invalid, "operation %s selects more than %d fields once its fragments are expanded (the limit is %d)", opName(op), g.limits.Expanded, g.limits.Expanded)
		}
		if e.depth > g.limits.Depth {
			return fault.New(fault.Invalid, "operation %s nests fields %d deep; the limit is %d", opName(op), e.depth, g.limits.Depth)
		}
	}
	return nil
}

// sameNames refuses a selection set holding more than SameName fields of
// one response name. Each selection set of the document is read with the
// fields its fragments add at its level, every fragment once per set.
func (g *documentGuard) sameNames(doc *ast.QueryDocument) error {
	var check func(set ast.SelectionSet) error
	check = func(set ast.SelectionSet) error {
		counts := map[string]int{}
		collectLevel(doc, set, counts, map[string]bool{})
		for name, n := range counts {
			if n > g.limits.SameName {
				return fault.New(fault.Invalid, "a selection set selects %s %d times; the limit is %d fields of one name (alias) per selection set, fragments included", name, n, g.limits.SameName)
			}
		}
		for _, s := range set {
			var sub ast.SelectionSet
			switch s := s.(type) {
			case *ast.Field:
				sub = s.SelectionSet
			case *ast.InlineFragment:
				sub = s.SelectionSet
			}
			if err := check(sub); err != nil {
				return err
			}
		}
		return nil
	}
	for _, op := range doc.Operations {
		if err := check(op.SelectionSet); err != nil {
			return err
		}
	}
	for _, f := range doc.Fragments {
		if err := check(f.SelectionSet); err != nil {
			return err
		}
	}
	return nil
}

// collectLevel counts the fields of set's own level by response name.
func collectLevel(doc *ast.QueryDocument, set ast.SelectionSet, counts map[string]int, seen map[string]bool) {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			name := s.Alias
			if name == "" {
				name = s.Name
			}
			counts[name]++
		case *ast.InlineFragment:
			collectLevel(doc, s.SelectionSet, counts, seen)
		case *ast.FragmentSpread:
			if f := doc.Fragments.ForName(s.Name); f != nil && !seen[s.Name] {
				seen[s.Name] = true
				collectLevel(doc, f.SelectionSet, counts, seen)
			}
		}
	}
}

func opName(op *ast.OperationDefinition) string {
	if op.Name == "" {
		return "(anonymous)"
	}
	return op.Name
}

func countSelections(set ast.SelectionSet) int {
	n := 0
	for _, s := range set {
		n++
		switch s := s.(type) {
		case *ast.Field:
			n += countSelections(s.SelectionSet)
		case *ast.InlineFragment:
			n += countSelections(s.SelectionSet)
		}
	}
	return n
}

// extent is the size and depth of a selection set once expanded.
type extent struct{ size, depth int }

// expansion computes extents, remembering each fragment's, so the work is
// linear in the document however often fragments are spread.
type expansion struct {
	doc      *ast.QueryDocument
	memo     map[string]extent
	visiting map[string]bool
}

func (m *expansion) of(set ast.SelectionSet) (extent, error) {
	var out extent
	for _, s := range set {
		var e extent
		switch s := s.(type) {
		case *ast.Field:
			sub, err := m.of(s.SelectionSet)
			if err != nil {
				return out, err
			}
			e = extent{size: addSat(1, sub.size), depth: sub.depth + 1}
		case *ast.InlineFragment:
			sub, err := m.of(s.SelectionSet)
			if err != nil {
				return out, err
			}
			e = sub
		case *ast.FragmentSpread:
			sub, err := m.fragment(s.Name)
			if err != nil {
				return out, err
			}
			e = sub
		}
		out.size = addSat(out.size, e.size)
		out.depth = max(out.depth, e.depth)
	}
	return out, nil
}

func (m *expansion) fragment(name string) (extent, error) {
	if e, ok := m.memo[name]; ok {
		return e, nil
	}
	if m.visiting[name] {
		return extent{}, fault.New(fault.Invalid, "fragment %s spreads itself", name)
	}
	f := m.doc.Fragments.ForName(name)
	if f == nil {
		return extent{}, nil // unknown: validation names it
	}
	m.visiting[name] = true
	e, err := m.of(f.SelectionSet)
	delete(m.visiting, name)
	if err != nil {
		return e, err
	}
	m.memo[name] = e
	return e, nil
}

// addSat adds without overflowing: an expansion may be astronomically
// large, and only "over the limit" matters.
func addSat(a, b int) int {
	if a > math.MaxInt32-b {
		return math.MaxInt32
	}
	return a + b
}

// operationCost is what an operation takes from the rate limit: each root
// field, aliases and fragments included, is one operation, so 450 aliased
// sends cost 450 and 20 aliased events pages cost 20, like 20 requests; an
// operation costs at least one (a subscription has one root field).
func operationCost(doc *ast.QueryDocument, op *ast.OperationDefinition) int {
	return max(1, rootFields(doc, op.SelectionSet, map[string]bool{}))
}

// rootFields counts the fields a selection set runs (__typename runs
// nothing). Like gqlgen's field collection it takes each fragment once;
// fields of one response name counted twice only overcharge.
func rootFields(doc *ast.QueryDocument, set ast.SelectionSet, seen map[string]bool) int {
	n := 0
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name != "__typename" {
				n++
			}
		case *ast.InlineFragment:
			n += rootFields(doc, s.SelectionSet, seen)
		case *ast.FragmentSpread:
			if f := doc.Fragments.ForName(s.Name); f != nil && !seen[s.Name] {
				seen[s.Name] = true
				n += rootFields(doc, f.SelectionSet, seen)
			}
		}
	}
	return n
}

// presentFault turns a fault raised before execution into the GraphQL error
// of its code: the error presenter does not see errors of this stage.
func presentFault(err error) *gqlerror.Error {
	f := fault.From(err)
	if f == nil {
		f = fault.New(fault.Invalid, "the request ended before its document was checked")
	}
	return &gqlerror.Error{Message: f.Message, Extensions: map[string]any{"code": ExtensionCode(f.Code)}}
}
