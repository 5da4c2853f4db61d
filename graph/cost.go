package graph

// Cost limits that bound work, not syntax. An operation's cost is counted on
// the schema before it runs: each field costs 1 plus what it selects, and a
// paged field (an Int argument first, last, limit or pageSize) costs its
// page size times what one item selects, each alias on its own. An answer
// is then bounded in bytes while it is built: a query whose answer grows
// past the bound stops and answers one PAYLOAD_TOO_LARGE error instead.

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/wagraph/wagraph/graph/model"
	"github.com/wagraph/wagraph/internal/fault"
)

// DefaultComplexityLimit leaves room for the largest page of every paged
// field with all its fields (events first: 500 with every field costs
// about 6,000) and for GraphiQL's introspection, and refuses a handful of
// aliased large pages.
const DefaultComplexityLimit = 10_000

// DefaultMaxAnswer bounds the bytes of one answer of a query or mutation.
const DefaultMaxAnswer = 16 << 20

// sizeArguments are the Int arguments that set how many items a field
// answers.
var sizeArguments = []string{"first", "last", "limit", "pageSize"}

// costLimit is the gqlgen extension that refuses an operation whose cost is
// over limit, after validation and before anything runs. gqlgen's own
// ComplexityLimit counts a paged field as 1 plus its children whatever its
// page size.
type costLimit struct {
	limit int
	es    graphql.ExecutableSchema
}

var (
	_ graphql.HandlerExtension        = (*costLimit)(nil)
	_ graphql.OperationContextMutator = (*costLimit)(nil)
)

func (*costLimit) ExtensionName() string { return "CostLimit" }

func (c *costLimit) Validate(es graphql.ExecutableSchema) error {
	c.es = pagedCost{es}
	return nil
}

func (c *costLimit) MutateOperationContext(ctx context.Context, opCtx *graphql.OperationContext) *gqlerror.Error {
	if opCtx.Operation == nil {
		return nil
	}
	cost := operationComplexity(ctx, c.es, opCtx.Operation, opCtx.Variables)
	if cost <= c.limit {
		return nil
	}
	return presentFault(fault.New(fault.Invalid,
		"the operation costs %d; the limit is %d (--graphql-complexity): each field costs 1, a paged field (first, last, limit, pageSize) "+
			"its page size times the fields it selects, and each alias counts: ask for smaller pages, fewer fields or fewer aliases",
		cost, c.limit))
}

// operationComplexity is gqlgen's walk (each alias and each fragment
// spread counted, introspection's __schema free) over pagedCost.
func operationComplexity(ctx context.Context, es graphql.ExecutableSchema, op *ast.OperationDefinition, vars map[string]any) int {
	return complexity.Calculate(ctx, es, op, vars)
}

// pagedCost is the executable schema with the cost of paged fields: gqlgen's
// walker asks it for every field's cost given its children's.
type pagedCost struct{ graphql.ExecutableSchema }

func (p pagedCost) Complexity(ctx context.Context, typeName, field string, child int, args map[string]any) (int, bool) {
	if def := p.Schema().Types[typeName]; def != nil {
		if fd := def.Fields.ForName(field); fd != nil {
			if n, ok := pageSize(fd, args); ok {
				return satAdd(1, satMul(n, max(1, child))), true
			}
		}
	}
	return p.ExecutableSchema.Complexity(ctx, typeName, field, child, args)
}

// pageSize is the largest size argument of a field: its value (variables
// resolved), else the schema's default, as the resolvers read them. A value
// below 1 is refused by the resolver and costs as 1; one that does not fit
// an int costs the most.
func pageSize(fd *ast.FieldDefinition, args map[string]any) (int, bool) {
	n, found := 0, false
	for _, name := range sizeArguments {
		ad := fd.Arguments.ForName(name)
		if ad == nil || ad.Type.Name() != "Int" {
			continue
		}
		found = true
		v := args[name]
		if v == nil && ad.DefaultValue != nil {
			v, _ = ad.DefaultValue.Value(nil)
		}
		if v == nil {
			// No value and no default: the resolver's own default is not
			// known here (TestSizeArgumentsHaveDefaults keeps this unused).
			v = 100
		}
		size, err := graphql.UnmarshalInt(v)
		if err != nil {
			size = math.MaxInt32
		}
		n = max(n, size, 1)
	}
	return n, found
}

func satMul(a, b int) int {
	if a > 0 && b > math.MaxInt32/a {
		return math.MaxInt32
	}
	return a * b
}

func satAdd(a, b int) int {
	if a > math.MaxInt32-b {
		return math.MaxInt32
	}
	return a + b
}

// answerBudget counts the bytes of one query's answer while it is built.
type answerBudget struct {
	limit  int64
	used   atomic.Int64
	over   atomic.Bool
	cancel context.CancelFunc // stops the resolvers still running
}

func (b *answerBudget) add(n int) {
	if b.used.Add(int64(n)) > b.limit && b.over.CompareAndSwap(false, true) {
		b.cancel()
	}
}

type budgetKey struct{}

// boundAnswers is the operation middleware that bounds the answer of a
// query or a mutation to limit bytes: past it the answer is one
// PAYLOAD_TOO_LARGE error and no data. A query's budget is counted as its
// fields resolve (countAnswer); once it is spent the query's resolvers
// still running are cancelled and every root field that ends is dropped
// (dropOverBudget), so the answer is never marshalled whole. A mutation is
// never cut short (its effects are done); only its marshalled answer is
// measured. A subscription's answers are single events, bounded where they
// are stored.
func boundAnswers(limit int64) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if !graphql.HasOperationContext(ctx) {
			return next(ctx)
		}
		op := graphql.GetOperationContext(ctx).Operation
		if op == nil || op.Operation == ast.Subscription {
			return next(ctx)
		}
		var b *answerBudget
		if op.Operation == ast.Query {
			b = &answerBudget{limit: limit}
			ctx, b.cancel = context.WithCancel(ctx)
			ctx = context.WithValue(ctx, budgetKey{}, b)
		}
		h := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			resp := h(ctx)
			if b != nil && (resp == nil || resp.HasNext == nil || !*resp.HasNext) {
				defer b.cancel() // the last answer: nothing runs any more
			}
			if resp == nil {
				return nil
			}
			if (b != nil && b.over.Load()) || int64(len(resp.Data)) > limit {
				return answerTooLarge(limit)
			}
			return resp
		}
	}
}

func answerTooLarge(limit int64) *graphql.Response {
	return &graphql.Response{Errors: gqlerror.List{presentFault(fault.New(fault.TooLarge,
		"the answer is larger than %d MiB (the limit of one answer): ask for smaller pages (first, pageSize), fewer fields or fewer aliases",
		limit>>20))}}
}

// countAnswer is the field middleware that charges each resolved field of
// a query to its answer's budget: its name and, for a leaf, its value.
func countAnswer(ctx context.Context, next graphql.Resolver) (any, error) {
	res, err := next(ctx)
	b, _ := ctx.Value(budgetKey{}).(*answerBudget)
	if b == nil || err != nil {
		return res, err
	}
	fc := graphql.GetFieldContext(ctx)
	n := 4 // quotes, colon, comma
	if fc != nil {
		n += len(fc.Field.Alias)
		if len(fc.Field.Selections) == 0 {
			n += leafSize(res)
		}
	}
	b.add(n)
	return res, err
}

// dropOverBudget is the root field middleware that drops a root field's
// answer once the query's budget is spent, before it is marshalled.
func dropOverBudget(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	m := next(ctx)
	if b, _ := ctx.Value(budgetKey{}).(*answerBudget); b != nil && b.over.Load() {
		return graphql.Null
	}
	return m
}

// leafSize estimates the JSON bytes of a scalar or enum value, or of a
// list of them, never above them (escapes are not counted), so a budget it
// spends is an answer over the bound; the marshalled answer is measured
// exactly at the end.
func leafSize(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return len(v) + 2
	case *string:
		if v == nil {
			return 4
		}
		return len(*v) + 2
	case model.JSON:
		return max(len(v), 4)
	case json.RawMessage:
		return max(len(v), 4)
	case []byte:
		return len(v)*4/3 + 4
	case time.Time:
		return 26 // "2026-11-22T10:04:05.123Z"
	case *time.Time:
		if v == nil {
			return 4
		}
		return 26
	case bool:
		return len(strconv.FormatBool(v))
	case int:
		return len(strconv.Itoa(v))
	case int64:
		return len(strconv.FormatInt(v, 10))
	case float64:
		return len(strconv.FormatFloat(v, 'g', -1, 64))
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return 4
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.String:
		return rv.Len() + 2
	case reflect.Slice, reflect.Array:
		n := 2
		for i := range rv.Len() {
			n += 1 + leafSize(rv.Index(i).Interface())
		}
		return n
	}
	return 1
}
