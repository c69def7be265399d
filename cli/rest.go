package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// maxResponse bounds a response body read into memory.
const maxResponse = 64 << 20

// restTransport talks to the gateway's /api.
type restTransport struct {
	base string
	hc   *http.Client
}

func newRESTTransport(base string) *restTransport {
	return &restTransport{base: base, hc: &http.Client{
		// A redirect means --url points somewhere else than the gateway
		// (http to https, a login page): say so instead of replaying a
		// POST as a GET somewhere else.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (r *restTransport) target() string { return r.base }

func (r *restTransport) close() error {
	r.hc.CloseIdleConnections()
	return nil
}

// pathField matches a {field} of a route.
var pathField = regexp.MustCompile(`\{([a-z_]+)\}`)

func (r *restTransport) call(ctx context.Context, o op, in, out proto.Message, md map[string]string) ([]byte, error) {
	method, route, _ := strings.Cut(o.http, " ")
	fields, err := requestFields(in)
	if err != nil {
		return nil, err
	}
	var missing []string
	path := pathField.ReplaceAllStringFunc(route, func(m string) string {
		name := m[1 : len(m)-1]
		var v string
		switch f := fields[name].(type) {
		case string:
			v = f
		case json.Number: // an integer field (a seq)
			v = f.String()
		}
		delete(fields, name)
		if v == "" {
			missing = append(missing, name)
		}
		return url.PathEscape(v)
	})
	if len(missing) > 0 {
		return nil, usagef("%s must not be empty", strings.Join(missing, ", "))
	}
	target := r.base + path
	var body io.Reader
	switch {
	case method == http.MethodGet:
		if q := queryOf(fields); len(q) > 0 {
			target += "?" + q.Encode()
		}
	case len(fields) > 0:
		b, err := json.Marshal(fields)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	accept := "application/json"
	if o.text != "" {
		accept = "text/plain, application/json"
	}
	status, raw, err := r.do(ctx, method, target, body, accept, md)
	if err != nil {
		return nil, err
	}
	if o.text != "" {
		m, fd := textField(o, out)
		m.Set(fd, protoreflect.ValueOfString(string(raw)))
		return raw, nil
	}
	if err := unmarshalOptions.Unmarshal(raw, responseBody(o, out)); err != nil {
		return nil, &apiError{Status: status, Detail: fmt.Sprintf("unreadable answer from %s %s: %v", method, path, err)}
	}
	return raw, nil
}

// send performs a request by route (foundry api): path is from the
// gateway's root, with its query. The body of the answer is returned
// whatever its status, with an apiError for a status of 300 or more.
func (r *restTransport) send(ctx context.Context, method, path string, body []byte, md map[string]string) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	_, raw, err := r.do(ctx, method, r.base+path, rd, "application/json, text/plain", md)
	return raw, err
}

// do sends one request and reads its answer: the status and body, and an
// apiError (with the body still returned) for a status of 300 or more.
func (r *restTransport) do(ctx context.Context, method, target string, body io.Reader, accept string, md map[string]string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return 0, nil, usagef("--url: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "foundry-cli")
	for k, v := range md {
		req.Header.Set(k, v)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return 0, nil, &unreachableError{target: r.base, err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return 0, nil, &unreachableError{target: r.base, err: err}
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, raw, httpError(resp, raw)
	}
	return resp.StatusCode, raw, nil
}

// requestFields is the request as the API's JSON object, numbers kept as
// written. Unset fields are absent, so they are neither queried nor sent.
func requestFields(in proto.Message) (map[string]any, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(in)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	fields := map[string]any{}
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// queryOf renders fields as a query: a list repeats its parameter
// (?tags=a&tags=b), as the gateway reads it.
func queryOf(fields map[string]any) url.Values {
	q := url.Values{}
	for k, v := range fields {
		if list, ok := v.([]any); ok {
			for _, e := range list {
				q.Add(k, fmt.Sprint(e))
			}
			continue
		}
		q.Set(k, fmt.Sprint(v))
	}
	return q
}

// httpError turns an error response into an apiError: its detail and
// fields, or, from something that is not the gateway (a proxy's HTML
// page), the status and the start of the body.
func httpError(resp *http.Response, raw []byte) error {
	e := &apiError{Status: resp.StatusCode}
	var body struct {
		Detail string       `json:"detail"`
		Errors []fieldError `json:"errors"`
	}
	if json.Unmarshal(raw, &body) == nil && body.Detail != "" {
		e.Detail, e.Fields = body.Detail, body.Errors
		return e
	}
	e.Detail = resp.Status
	if resp.StatusCode < 400 {
		e.Detail += ": unexpected redirect to " + resp.Header.Get("Location") + " (check --url)"
	} else if text := strings.TrimSpace(string(raw)); text != "" {
		line, _, _ := strings.Cut(text, "\n")
		if len(line) > 200 {
			line = line[:200] + "…"
		}
		e.Detail += ": " + line
	}
	return e
}
