package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/foundryhq/foundry/services/platform/authz"
)

// Routing. grpc-gateway's ServeMux finds a request's route by trying every
// pattern registered for its method in turn, and a pattern that does not
// match costs allocations and an errors.As on its error: with Foundry's 80
// operations in one mux, a GET of an idea spent 16 µs and 76 allocations
// in that scan before its handler ran (a third of what the gateway spends
// of its own on the request); with a mux per service, still 7 µs of the
// gateway's CPU a request under load. So every operation of the generated
// document is registered on the gateway's net/http.ServeMux under its
// method and path template ("GET /api/ideas/{idea_id}"), which finds it in
// a tree, leading to a mux of its own: its service's routes, on which that
// operation's pattern is tried first (operationMuxes). The mux of every
// route stays under /api/ and answers whatever no operation's pattern
// names (an unknown path, another method, a trailing slash) exactly as
// before.

// operation is one REST operation of the generated document: its method,
// its path template and the short name of the gRPC service behind it
// ("PortfolioService").
type operation struct {
	method, path, service string
}

// pattern is the operation as a net/http.ServeMux pattern.
func (o operation) pattern() string { return o.method + " " + o.path }

// operations lists the operations of a generated OpenAPI (Swagger 2.0)
// document, whose operationIds are <Service>_<Method>, in a stable order.
func operations(doc []byte) ([]operation, error) {
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read the generated OpenAPI document: %w", err)
	}
	var out []operation
	for path, item := range d.Paths {
		for method, raw := range item {
			m := strings.ToUpper(method)
			switch m {
			case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			default:
				continue // "parameters" and other members of a path item
			}
			var op struct {
				ID string `json:"operationId"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", m, path, err)
			}
			service, _, ok := strings.Cut(op.ID, "_")
			if !ok {
				return nil, fmt.Errorf("%s %s: operationId %q is not <Service>_<Method>", m, path, op.ID)
			}
			out = append(out, operation{method: m, path: path, service: service})
		}
	}
	slices.SortFunc(out, func(a, b operation) int { return strings.Compare(a.pattern(), b.pattern()) })
	return out, nil
}

// serviceName is a fully qualified gRPC service's short name, as
// operationIds spell it ("foundry.portfolio.v1.PortfolioService" →
// "PortfolioService").
func serviceName(full string) string { return full[strings.LastIndex(full, ".")+1:] }

// routeOperations registers every operation of ops that has a mux in
// byOperation (by its pattern) on root, leading to that mux. An operation
// of a service the gateway does not serve is left to the mux under /api/,
// and one whose pattern root has already (a route the gateway serves by
// hand, such as GET /api/ready) to that route, as before. Two operations
// whose patterns net/http cannot tell apart are an error (net/http's own
// check, which panics).
func routeOperations(root *http.ServeMux, ops []operation, byOperation map[string]*runtime.ServeMux) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the API's routes: %v", v)
		}
	}()
	for _, op := range ops {
		own := byOperation[op.pattern()]
		if own == nil {
			continue
		}
		probe, err := http.NewRequest(op.method, op.path, nil)
		if err != nil {
			return fmt.Errorf("the API's routes: %s: %w", op.pattern(), err)
		}
		if _, served := root.Handler(probe); served == op.pattern() {
			continue
		}
		root.Handle(op.pattern(), own)
	}
	return nil
}

// operationMuxes returns a mux for each operation of ops that service
// serves, by the operation's pattern: the service's routes (register puts
// them on a mux), on which the operation's own grpc-gateway pattern is
// tried first. A mux tries its patterns newest first, so the operation's
// handler is registered once more, last; the rest stay behind it, so a
// request the operation's pattern turns down is answered as the service's
// mux answered it.
//
// grpc-gateway's generated code keeps its patterns and handlers to itself,
// so they are found by asking: the service's routes are registered on a
// probe mux whose innermost middleware keeps each handler as it is
// registered, and a request for each operation's path there says which
// handler and pattern took it. An operation of the document that none
// takes is an error: the document and the generated code disagree.
func operationMuxes(ops []operation, service string, fwd *authz.Forwarder, register func(*runtime.ServeMux) error) (map[string]*runtime.ServeMux, error) {
	type taken struct {
		handler int
		pattern runtime.Pattern
	}
	type probeKey struct{}
	var handlers []runtime.HandlerFunc
	keep := func(next runtime.HandlerFunc) runtime.HandlerFunc {
		i := len(handlers)
		handlers = append(handlers, next)
		return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
			if t, _ := r.Context().Value(probeKey{}).(*taken); t != nil {
				t.handler = i
				t.pattern, _ = runtime.HTTPPattern(r.Context())
				return
			}
			next(w, r, params)
		}
	}
	probe := newAPIMux(fwd, keep)
	if err := register(probe); err != nil {
		return nil, err
	}
	out := map[string]*runtime.ServeMux{}
	for _, op := range ops {
		if op.service != service {
			continue
		}
		t := &taken{handler: -1}
		req, err := http.NewRequestWithContext(context.WithValue(context.Background(), probeKey{}, t), op.method, samplePath(op.path), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op.pattern(), err)
		}
		probe.ServeHTTP(&nowhere{header: http.Header{}}, req)
		if t.handler < 0 {
			return nil, fmt.Errorf("%s: no route of %s takes it", op.pattern(), service)
		}
		own := newAPIMux(fwd)
		if err := register(own); err != nil {
			return nil, err
		}
		// The generated handler, as the probe mux was given it (it answers
		// with the probe mux's options, which are every API mux's); the
		// mux's own middlewares wrap it again.
		own.Handle(op.method, t.pattern, handlers[t.handler])
		out[op.pattern()] = own
	}
	return out, nil
}

// nowhere is a ResponseWriter that keeps only the status it was given:
// the probe's answers, and BenchmarkEdge's, are not read.
type nowhere struct {
	header http.Header
	status int
}

func (w *nowhere) Header() http.Header  { return w.header }
func (w *nowhere) WriteHeader(code int) { w.status = code }
func (w *nowhere) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}

// samplePath is a path template with a value in each of its wildcards.
func samplePath(template string) string {
	return wildcard.ReplaceAllString(template, "0193a3c0-aaaa-7bbb-8ccc-123456789abc")
}

// wildcard is a path template's wildcard ("{idea_id}").
var wildcard = regexp.MustCompile(`\{[^}]+\}`)
