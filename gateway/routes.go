package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
)

// Routing. grpc-gateway's ServeMux finds a request's route by trying every
// pattern registered for its method in turn, and a pattern that does not
// match costs allocations and an errors.As on its error: with Foundry's 80
// operations in one mux, a GET of an idea spent 16 µs and 76 allocations
// in that scan before its handler ran (a third of what the gateway spends
// of its own on the request). So each service's routes are registered on
// a mux of their own as well, and every operation of the generated
// document is registered on the gateway's net/http.ServeMux under its
// method and path template ("GET /api/ideas/{idea_id}"), leading to its
// service's mux: net/http's mux finds it in a tree, and the service's mux
// then scans that service's patterns only. The mux of every route stays
// under /api/ and answers whatever no operation's pattern names (an
// unknown path, another method, a trailing slash) exactly as before.

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

// routeOperations registers every operation of ops whose service has a mux
// in byService on root, leading to that mux. An operation of a service the
// gateway does not serve is left to the mux under /api/, and one whose
// pattern root has already (a route the gateway serves by hand, such as
// GET /api/ready) to that route, as before. Two operations whose patterns
// net/http cannot tell apart are an error (net/http's own check, which
// panics).
func routeOperations(root *http.ServeMux, ops []operation, byService map[string]*runtime.ServeMux) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the API's routes: %v", v)
		}
	}()
	for _, op := range ops {
		own := byService[op.service]
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
