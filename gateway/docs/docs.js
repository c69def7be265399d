/* Foundry API reference: renders /api/openapi.json (Swagger 2.0) with plain DOM code.
 * The pure helpers are exported when `module` exists so Node can test them. */
(function () {
  'use strict';

  const SPEC_URL = '../openapi.json';
  const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];
  const STORE = { token: 'foundry.docs.token', key: 'foundry.docs.apikey' };
  const MAX_DEPTH = 12;

  // Well-known protobuf definitions that read better as a plain label.
  // Names are matched without "google" (googleprotobufStruct = protobufStruct).
  const WELL_KNOWN = {
    protobufStruct: { label: 'object (free JSON)', example: () => ({}) },
    protobufValue: { label: 'any JSON value', example: () => null },
    protobufListValue: { label: 'array (free JSON)', example: () => [] },
    protobufNullValue: { label: 'null', example: () => null },
    protobufEmpty: { label: 'object (empty)', example: () => ({}) },
  };
  const WRAPPER = /^protobuf(Double|Float|Int64|UInt64|Int32|UInt32|Bool|String|Bytes)Value$/;
  const WRAPPED = { Double: 'number double', Float: 'number float', Int64: 'string int64', UInt64: 'string uint64',
    Int32: 'integer int32', UInt32: 'integer uint32', Bool: 'boolean', String: 'string', Bytes: 'string byte' };

  // refName returns the definition name a "#/definitions/..." reference points to, or ''.
  function refName(ref) {
    if (typeof ref !== 'string' || !ref.startsWith('#/definitions/')) return '';
    return decodeURIComponent(ref.slice(14)).replace(/~1/g, '/').replace(/~0/g, '~');
  }

  // wellKnown returns the display rule of a well-known protobuf definition name, or null.
  function wellKnown(name) {
    name = String(name).replace(/^google(?=protobuf)/, '');
    if (Object.prototype.hasOwnProperty.call(WELL_KNOWN, name)) return WELL_KNOWN[name];
    const m = WRAPPER.exec(name);
    if (!m) return null;
    const [type, format] = WRAPPED[m[1]].split(' ');
    return { label: typeLabel({ type, format }) + ' | null', example: () => exampleValue({ type }, {}, []) };
  }

  // firstParagraph returns the first paragraph of a text, on one line.
  function firstParagraph(text) {
    return oneLine(String(text || '').trim().split(/\n\s*\n/)[0]);
  }

  // oneLine joins the lines of a description into a single line.
  function oneLine(text) {
    return String(text || '').trim().replace(/\s*\n\s*/g, ' ');
  }

  // schemaType infers the JSON type of a schema that may omit "type".
  function schemaType(s) {
    if (s.type) return Array.isArray(s.type) ? s.type.find((t) => t !== 'null') || 'string' : s.type;
    if (s.properties || s.additionalProperties) return 'object';
    if (s.items) return 'array';
    return '';
  }

  // typeLabel describes a primitive schema, e.g. "integer (int32)" or "string enum: a | b".
  function typeLabel(s) {
    let t = schemaType(s) || 'any';
    if (s.format) t += ` (${s.format})`;
    if (Array.isArray(s.enum) && s.enum.length) t += ' enum: ' + s.enum.map((v) => JSON.stringify(v)).join(' | ');
    if (s['x-nullable']) t += ' | null';
    return t;
  }

  // isScalar reports whether a schema (after resolving one $ref) renders on a single line.
  function isScalar(s, spec) {
    if (!s) return true;
    const name = refName(s.$ref);
    if (name) {
      if (wellKnown(name)) return true;
      s = (spec.definitions || {})[name];
      if (!s) return true;
    }
    const t = schemaType(s);
    return t !== 'object' && t !== 'array';
  }

  // skeleton flattens a schema into rows of an indented JSON-like outline.
  // Each row is { d: depth, code: [[cssClass, text], ...], desc, note }.
  function skeleton(schema, spec) {
    const rows = [];
    walkSchema(schema, spec || {}, 0, '', '', '', [], rows);
    return rows;
  }

  // walkSchema appends the rows of one schema to rows; stack holds the $refs being expanded
  // and isDef tells that s is a named definition (an empty one is an empty message).
  function walkSchema(s, spec, depth, key, comma, desc, stack, rows, isDef) {
    const lead = key ? [['sk-key', JSON.stringify(key)], ['', ': ']] : [];
    // push adds a raw row; row adds one prefixed by the key and followed by the comma.
    const push = (code, d, note) => rows.push({ d: depth, code, desc: d || '', note: note || '' });
    const row = (code, d, note) => push(lead.concat(code, comma ? [['', comma]] : []), d, note);
    if (!s || typeof s !== 'object' || !Object.keys(s).length) return row([['sk-type', 'any']], desc);
    const defs = spec.definitions || {};
    const name = refName(s.$ref);
    if (name) {
      const wk = wellKnown(name);
      if (wk) return row([['sk-type', wk.label]], desc || firstParagraph((defs[name] || {}).description));
      if (stack.includes(name)) return row([['sk-type', name]], desc, 'recursive: same shape as above');
      const def = defs[name];
      if (!def) return row([['sk-type', name]], desc, 'undefined reference');
      return walkSchema(def, spec, depth, key, comma, desc || firstParagraph(def.description || def.title), stack.concat(name), rows, true);
    }
    if (depth > MAX_DEPTH) return row([['sk-type', '…']], desc, 'nested too deep to show');
    const type = schemaType(s);
    const notes = [s.readOnly ? 'read-only' : '', s.default !== undefined ? 'default ' + JSON.stringify(s.default) : ''].filter(Boolean).join(', ');
    if (type === 'array') {
      const items = s.items || {};
      if (isScalar(items, spec)) {
        const inner = [];
        walkSchema(items, spec, 0, '', '', '', stack, inner);
        const label = inner[0].code.map((c) => c[1]).join('');
        return row([['', '['], ['sk-type', label], ['', ']']], desc || inner[0].desc, notes);
      }
      push(lead.concat([['', '[']]), desc, notes);
      walkSchema(items, spec, depth + 1, '', '', '', stack, rows);
      rows.push({ d: depth, code: [['', ']' + comma]], desc: '', note: '' });
      return;
    }
    if (type === 'object') {
      const props = Object.entries(s.properties || {});
      const extra = s.additionalProperties && typeof s.additionalProperties === 'object' ? s.additionalProperties : null;
      if (!props.length && !extra) {
        const label = s.additionalProperties ? 'object (free JSON map)' : isDef ? '{ } (empty object)' : 'object (free JSON)';
        return row([['sk-type', label]], desc, notes);
      }
      const req = new Set(Array.isArray(s.required) ? s.required : []);
      push(lead.concat([['', '{']]), desc, notes);
      props.forEach(([k, p], i) => {
        const before = rows.length;
        walkSchema(p, spec, depth + 1, k, i === props.length - 1 && !extra ? '' : ',', oneLine(p.description || p.title), stack, rows);
        if (req.has(k)) rows[before].note = ['required', rows[before].note].filter(Boolean).join(', ');
      });
      if (extra) walkSchema(extra, spec, depth + 1, '<key>', '', 'any number of keys', stack, rows);
      rows.push({ d: depth, code: [['', '}' + comma]], desc: '', note: '' });
      return;
    }
    return row([['sk-type', typeLabel(s)]], desc || oneLine(s.title), notes);
  }

  // exampleValue builds a request-body example with default values for a schema.
  function exampleValue(s, spec, stack) {
    if (!s || typeof s !== 'object') return null;
    const name = refName(s.$ref);
    if (name) {
      const wk = wellKnown(name);
      if (wk) return wk.example();
      const def = (spec.definitions || {})[name];
      if (!def || stack.includes(name) || stack.length > MAX_DEPTH) return schemaType(def || {}) === 'array' ? [] : null;
      return exampleValue(def, spec, stack.concat(name));
    }
    if (s.default !== undefined) return s.default;
    if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
    switch (schemaType(s)) {
      case 'string': return '';
      case 'integer': case 'number': return 0;
      case 'boolean': return false;
      case 'array': {
        const item = isScalar(s.items, spec) ? null : exampleValue(s.items, spec, stack);
        return item === null ? [] : [item];
      }
      case 'object': {
        const out = {};
        for (const [k, p] of Object.entries(s.properties || {})) if (!p.readOnly) out[k] = exampleValue(p, spec, stack);
        return out;
      }
      default: return null;
    }
  }

  // resolveParam follows a "#/parameters/..." reference of a parameter object.
  function resolveParam(p, spec) {
    if (p && typeof p.$ref === 'string' && p.$ref.startsWith('#/parameters/')) return (spec.parameters || {})[p.$ref.slice(13)] || p;
    return p;
  }

  // fallbackTag groups an untagged operation by the first path segment after /api.
  function fallbackTag(path, basePath) {
    const segs = String(path).replace(/^\/+/, '').split('/');
    if (segs[0] === 'api' || ('/' + segs[0]) === basePath) segs.shift();
    return segs[0] && !segs[0].startsWith('{') ? segs[0] : 'other';
  }

  // collectOperations lists every operation of the spec with its merged parameters.
  function collectOperations(spec) {
    const ops = [];
    const ids = new Set();
    for (const [path, item] of Object.entries(spec.paths || {})) {
      if (!item || typeof item !== 'object') continue;
      const shared = (item.parameters || []).map((p) => resolveParam(p, spec));
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const own = (op.parameters || []).map((p) => resolveParam(p, spec));
        const params = shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)).concat(own);
        let id = 'op-' + String(op.operationId || `${method}-${path}`).replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '');
        while (ids.has(id)) id += '_';
        ids.add(id);
        const tag = (Array.isArray(op.tags) && op.tags[0]) || fallbackTag(path, spec.basePath);
        let summary = oneLine(op.summary);
        let description = String(op.description || '').trim();
        if (!summary && description) { summary = firstParagraph(description); description = description.split(/\n\s*\n/).slice(1).join('\n\n'); }
        ops.push({ id, method, path, op, tag, params, summary, description,
          haystack: [method, path, summary, description, op.operationId, tag].join(' ').toLowerCase() });
      }
    }
    return ops;
  }

  // groupOperations buckets operations by tag, in the spec's tag order then first use.
  function groupOperations(ops, spec) {
    const groups = new Map();
    for (const t of spec.tags || []) groups.set(t.name, { name: t.name, description: t.description || '', ops: [] });
    for (const o of ops) {
      if (!groups.has(o.tag)) groups.set(o.tag, { name: o.tag, description: '', ops: [] });
      groups.get(o.tag).ops.push(o);
    }
    return [...groups.values()].filter((g) => g.ops.length);
  }

  // tagTitle turns a tag like "LedgerService" into a heading like "Ledger".
  function tagTitle(name) {
    const t = String(name).replace(/Service$/, '') || String(name);
    return t.charAt(0).toUpperCase() + t.slice(1);
  }

  // successResponse picks the 200/201 (or first 2xx) response of an operation.
  function successResponse(op) {
    const r = op.responses || {};
    const code = ['200', '201'].find((c) => r[c]) || Object.keys(r).find((c) => /^2\d\d$/.test(c));
    return code ? { code, res: r[code] } : null;
  }

  // matches reports whether an operation matches every word of a filter query.
  function matches(o, query) {
    return String(query).toLowerCase().split(/\s+/).filter(Boolean).every((w) => o.haystack.includes(w));
  }

  // buildUrl fills path parameters and appends query parameters; it returns { url, missing }.
  function buildUrl(basePath, path, params, values) {
    const missing = [];
    const base = basePath && basePath !== '/' ? basePath.replace(/\/+$/, '') : '';
    const filled = path.replace(/\{([^}=]+)(=[^}]*)?\}/g, (m, name, pattern) => {
      const v = values[`path:${name}`];
      if (v === undefined || v === '') { missing.push(name); return m; }
      return pattern ? String(v).split('/').map(encodeURIComponent).join('/') : encodeURIComponent(v);
    });
    const qs = [];
    for (const p of params) {
      if (p.in !== 'query') continue;
      const v = values[`query:${p.name}`];
      if (v === undefined || v === '') { if (p.required) missing.push(p.name); continue; }
      // enc encodes one name=value pair.
      const enc = (x) => `${encodeURIComponent(p.name)}=${encodeURIComponent(x)}`;
      if (p.type === 'array') {
        const list = String(v).split(',').map((x) => x.trim()).filter(Boolean);
        const sep = { ssv: ' ', tsv: '\t', pipes: '|' }[p.collectionFormat] || ',';
        if (p.collectionFormat === 'multi') list.forEach((x) => qs.push(enc(x)));
        else if (list.length) qs.push(enc(list.join(sep)));
      } else qs.push(enc(v));
    }
    return { url: base + filled + (qs.length ? '?' + qs.join('&') : ''), missing };
  }

  // authHeaders returns the Authorization and X-API-Key headers for the saved credentials.
  function authHeaders(token, apiKey) {
    const h = {};
    token = String(token || '').trim();
    apiKey = String(apiKey || '').trim();
    if (token) h.Authorization = /^bearer\s/i.test(token) ? token : `Bearer ${token}`;
    if (apiKey) h['X-API-Key'] = apiKey;
    return h;
  }

  // errorShape returns {detail, errors} when a body looks like a Foundry API error, else null.
  function errorShape(body) {
    if (!body || typeof body !== 'object' || Array.isArray(body) || typeof body.detail !== 'string') return null;
    return { detail: body.detail, errors: Array.isArray(body.errors) ? body.errors : [] };
  }

  const api = { refName, wellKnown, skeleton, exampleValue, collectOperations, groupOperations, tagTitle,
    successResponse, matches, buildUrl, authHeaders, errorShape, fallbackTag, firstParagraph };
  if (typeof module !== 'undefined' && module.exports) module.exports = api;
  if (typeof document === 'undefined') return;

  /* ---------- DOM rendering ---------- */

  // h creates an element with attributes, event handlers and children.
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'value') el.value = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat(4)) if (c != null && c !== false) el.append(typeof c === 'string' ? document.createTextNode(c) : c);
    return el;
  }

  // $ returns the element with the given id.
  function $(id) { return document.getElementById(id); }

  // inlineText turns `backticks` into <code> and the rest into text nodes.
  function inlineText(text) {
    return String(text).split(/`([^`]+)`/).map((part, i) => (i % 2 ? h('code', { text: part }) : part));
  }

  // richText renders a description as paragraphs (split on blank lines) with inline code.
  function richText(text) {
    return h('div', { class: 'desc' }, String(text || '').trim().split(/\n\s*\n/).map((p) => h('p', null, inlineText(oneLine(p)))));
  }

  // methodBadge renders the colored HTTP method label.
  function methodBadge(method) {
    return h('span', { class: `method m-${method}` }, method.toUpperCase());
  }

  // pathLabel renders a path with its {parameters} emphasized.
  function pathLabel(path) {
    return h('span', { class: 'op-path' }, path.split(/(\{[^}]+\})/).map((p, i) => (i % 2 ? h('span', { class: 'sk-key' }, p) : p)));
  }

  // renderSkeleton turns skeleton rows into the schema outline element.
  function renderSkeleton(schema, spec, label) {
    const box = h('div', { class: 'schema', role: 'group', 'aria-label': label });
    for (const r of skeleton(schema, spec)) {
      box.append(h('div', { class: 'sk-row', style: `--d:${r.d}` },
        h('span', { class: 'sk-code' }, r.code.map(([c, t]) => (c ? h('span', { class: c }, t) : t))),
        r.note ? h('span', { class: 'sk-note', text: `(${r.note})` }) : null,
        r.desc ? h('span', { class: 'sk-desc', text: r.desc }) : null));
    }
    return box;
  }

  // paramType describes a non-body parameter's type for the table.
  function paramType(p) {
    if (p.in === 'body') return 'JSON body';
    if (p.type === 'array') return `array of ${(p.items && p.items.type) || 'string'}` + (p.collectionFormat ? ` (${p.collectionFormat})` : '');
    return typeLabel(p) + (p.default !== undefined ? ` default ${JSON.stringify(p.default)}` : '');
  }

  // renderParams builds the parameters table of an operation.
  function renderParams(params) {
    return h('div', { class: 'table-wrap' }, h('table', null,
      h('thead', null, h('tr', null, ['Name', 'In', 'Type', 'Required', 'Description'].map((c) => h('th', { scope: 'col', text: c })))),
      h('tbody', null, params.map((p) => h('tr', null,
        h('td', null, h('code', { text: p.name })), h('td', { text: p.in }), h('td', { class: 'mono', text: paramType(p) }),
        h('td', null, p.required ? h('span', { class: 'req', text: 'required' }) : 'optional'),
        h('td', null, inlineText(oneLine(p.description || (p.schema && refName(p.schema.$ref)) || ''))))))));
  }

  // storage reads or writes sessionStorage, ignoring browsers that refuse it.
  function storage(key, value) {
    try {
      if (value === undefined) return sessionStorage.getItem(key) || '';
      if (value) sessionStorage.setItem(key, value); else sessionStorage.removeItem(key);
    } catch (e) { /* storage disabled */ }
    return value || '';
  }

  // renderResult shows the status, any API error details and the pretty-printed body.
  function renderResult(box, res, text, ms) {
    let body = null;
    try { body = text ? JSON.parse(text) : null; } catch (e) { body = undefined; }
    const cls = `method code-badge code-${String(res.status).charAt(0)}`;
    const err = res.ok ? null : errorShape(body);
    const token = body && typeof body === 'object' && typeof body.session_token === 'string' && body.session_token;
    box.replaceChildren(...[
      h('p', null, h('span', { class: cls, text: String(res.status) }), ` ${res.statusText || ''} · ${ms} ms`),
      err ? h('div', { class: 'err-box' }, h('strong', { text: err.detail || 'Request failed' }),
        err.errors.length ? h('ul', null, err.errors.map((e) => h('li', null, h('code', { text: (e && e.field) || '?' }), ' ', (e && e.message) || ''))) : null) : null,
      token ? h('button', { type: 'button', class: 'btn ghost', onclick: () => setToken(token) }, 'Use this session_token as the Bearer token') : null,
      h('pre', { class: 'response', tabindex: '0', 'aria-label': 'Response body' },
        body === undefined ? text : text ? JSON.stringify(body, null, 2) : '(empty body)')].filter(Boolean));
  }

  // setToken stores a session token and shows it in the header input.
  function setToken(token) {
    $('auth-token').value = storage(STORE.token, token);
  }

  // paramInput creates the input control of one path or query parameter.
  function paramInput(o, p) {
    const id = `${o.id}-${p.in}-${p.name}`;
    const key = `${p.in}:${p.name}`;
    const choices = p.type === 'boolean' ? ['true', 'false'] : Array.isArray(p.enum) ? p.enum.map(String) : null;
    const control = choices
      ? h('select', { id }, h('option', { value: '', text: '(unset)' }), choices.map((c) => h('option', { value: c, text: c })))
      : h('input', { id, type: 'text', spellcheck: 'false', required: p.in === 'path' || p.required,
        inputmode: p.type === 'integer' || p.type === 'number' ? 'decimal' : null,
        placeholder: p.type === 'array' ? 'comma, separated' : p.default !== undefined ? String(p.default) : p.type || 'string' });
    return { key, control, field: h('div', { class: 'field' }, h('label', { for: id }, `${p.name} `, h('span', { class: 'opid', text: `(${p.in})` })), control) };
  }

  // renderTry builds the "Try it" form that sends a request with fetch().
  function renderTry(o, spec) {
    const inputs = o.params.filter((p) => p.in === 'path' || p.in === 'query' || p.in === 'header').map((p) => paramInput(o, p));
    const bodyParam = o.params.find((p) => p.in === 'body');
    const bodyId = `${o.id}-body`;
    const example = bodyParam ? JSON.stringify(exampleValue(bodyParam.schema, spec, []), null, 2) : '';
    const textarea = bodyParam ? h('textarea', { id: bodyId, spellcheck: 'false', rows: Math.min(18, example.split('\n').length + 1), value: example }) : null;
    const urlLine = h('p', { class: 'try-url', 'aria-live': 'polite' });
    const result = h('div', { class: 'result', 'aria-live': 'polite' });
    const send = h('button', { type: 'submit', class: 'btn' }, 'Send');
    // values reads the inputs; preview shows the request line they produce.
    const values = () => Object.fromEntries(inputs.map((i) => [i.key, i.control.value.trim()]));
    const preview = () => { urlLine.textContent = `${o.method.toUpperCase()} ${buildUrl(spec.basePath, o.path, o.params, values()).url}`; };
    inputs.forEach((i) => i.control.addEventListener('input', preview));
    preview();

    // submit validates the inputs, sends the request and renders the response.
    async function submit(ev) {
      ev.preventDefault();
      const { url, missing } = buildUrl(spec.basePath, o.path, o.params, values());
      if (missing.length) { result.replaceChildren(h('p', { class: 'status error', text: `Fill in: ${missing.join(', ')}` })); return; }
      const headers = Object.assign({ Accept: 'application/json' }, authHeaders($('auth-token').value, $('auth-key').value));
      for (const i of inputs) if (i.key.startsWith('header:') && i.control.value.trim()) headers[i.key.slice(7)] = i.control.value.trim();
      let body;
      if (textarea && textarea.value.trim()) {
        try { body = JSON.stringify(JSON.parse(textarea.value)); } catch (e) {
          result.replaceChildren(h('p', { class: 'status error', text: `The body is not valid JSON: ${e.message}` }));
          return;
        }
        headers['Content-Type'] = 'application/json';
      }
      send.disabled = true;
      result.replaceChildren(h('p', { class: 'status', text: 'Sending…' }));
      const t0 = performance.now();
      try {
        const res = await fetch(url, { method: o.method.toUpperCase(), headers, body, credentials: 'same-origin' });
        const text = await res.text();
        renderResult(result, res, text, Math.round(performance.now() - t0));
      } catch (e) {
        result.replaceChildren(h('p', { class: 'status error', text: `Network error: ${e.message}` }));
      } finally { send.disabled = false; }
    }

    return h('form', { class: 'try', onsubmit: submit, 'aria-label': `Try ${o.method.toUpperCase()} ${o.path}` },
      h('h3', { text: 'Try it' }),
      inputs.length ? h('div', { class: 'try-grid' }, inputs.map((i) => i.field)) : null,
      textarea ? h('div', { class: 'field' }, h('label', { for: bodyId, text: 'Request body (JSON)' }), textarea) : null,
      h('div', { class: 'try-actions' }, send,
        textarea ? h('button', { type: 'button', class: 'btn ghost', onclick: () => { textarea.value = example; } }, 'Reset body') : null),
      urlLine, result);
  }

  // renderOpBody builds the expanded content of one operation (rendered on first open).
  function renderOpBody(o, spec) {
    const body = h('div', { class: 'op-body' });
    if (o.op.deprecated) body.append(h('p', { class: 'status error', text: 'Deprecated.' }));
    if (o.description) body.append(richText(o.description));
    const visible = o.params.filter((p) => p.in !== 'body');
    body.append(h('h3', { text: 'Parameters' }), visible.length ? renderParams(visible) : h('p', { class: 'status', text: 'None.' }));
    const bp = o.params.find((p) => p.in === 'body');
    if (bp) {
      body.append(h('h3', null, 'Request body ', bp.required ? h('span', { class: 'req', text: 'required' }) : null));
      if (bp.description) body.append(richText(bp.description));
      body.append(renderSkeleton(bp.schema, spec, 'Request body schema'));
    }
    const ok = successResponse(o.op);
    body.append(h('h3', { text: ok ? `Response ${ok.code}` : 'Response' }));
    if (ok && ok.res.description && !/^A successful response\.?$/.test(ok.res.description)) body.append(richText(ok.res.description));
    body.append(ok && ok.res.schema ? renderSkeleton(ok.res.schema, spec, `Response ${ok.code} schema`) : h('p', { class: 'status', text: 'No body.' }));
    body.append(renderTry(o, spec));
    return body;
  }

  // renderOp builds the collapsible <details> of one operation.
  function renderOp(o, spec) {
    const el = h('details', { class: 'op', id: o.id },
      h('summary', null, methodBadge(o.method), pathLabel(o.path), o.summary ? h('span', { class: 'op-summary' }, inlineText(o.summary)) : null));
    el.addEventListener('toggle', () => {
      if (el.open && !el.dataset.rendered) { el.dataset.rendered = '1'; el.append(renderOpBody(o, spec)); }
    });
    return el;
  }

  // render draws the table of contents and every operation group.
  function render(spec) {
    const ops = collectOperations(spec);
    const groups = groupOperations(ops, spec);
    const v = (spec.info || {}).version;
    $('spec-version').textContent = (v && v !== 'version not set' ? `v${v} · ` : '') + `${ops.length} operations`;
    const toc = $('toc');
    const main = $('ops');
    const links = new Map();
    for (const g of groups) {
      const gid = `tag-${g.name.replace(/[^A-Za-z0-9_-]+/g, '-')}`;
      const list = h('ul');
      g.ops.forEach((o) => {
        const a = h('a', { href: `#${o.id}`, title: o.summary || o.path }, methodBadge(o.method), h('span', { text: o.path }));
        const li = h('li', null, a);
        links.set(o.id, { li, a });
        list.append(li);
      });
      g.tocEl = h('div', { class: 'toc-group' }, h('h2', null, h('a', { href: `#${gid}`, text: tagTitle(g.name) })), list);
      g.sectionEl = h('section', { class: 'group', id: gid, 'aria-labelledby': `${gid}-h` },
        h('h2', { id: `${gid}-h`, text: tagTitle(g.name) }),
        g.description ? h('p', { class: 'desc' }, inlineText(firstParagraph(g.description))) : null,
        g.ops.map((o) => (o.el = renderOp(o, spec))));
      toc.append(g.tocEl);
      main.append(g.sectionEl);
    }
    $('load-status').hidden = true;
    wireFilter(ops, groups, links);
    wireNavigation(ops, links);
    $('expand-all').addEventListener('click', () => ops.forEach((o) => { if (!o.el.hidden) o.el.open = true; }));
    $('collapse-all').addEventListener('click', () => ops.forEach((o) => { o.el.open = false; }));
  }

  // wireFilter hides operations, links and groups that do not match the filter box.
  function wireFilter(ops, groups, links) {
    const input = $('filter');
    const count = $('filter-count');
    // apply shows only the operations matching the filter box.
    const apply = () => {
      const q = input.value.trim();
      let shown = 0;
      for (const o of ops) {
        const ok = !q || matches(o, q);
        o.el.hidden = !ok;
        links.get(o.id).li.hidden = !ok;
        if (ok) shown++;
      }
      for (const g of groups) g.sectionEl.hidden = g.tocEl.hidden = !g.ops.some((o) => !o.el.hidden);
      count.textContent = q ? `${shown} of ${ops.length} operations match` : `${ops.length} operations`;
    };
    input.addEventListener('input', apply);
    input.addEventListener('keydown', (e) => { if (e.key === 'Escape') { input.value = ''; apply(); } });
    apply();
  }

  // wireNavigation opens and scrolls to the operation named in the URL hash.
  function wireNavigation(ops, links) {
    const byId = new Map(ops.map((o) => [o.id, o]));
    let current = null;
    // go opens the operation named by the hash.
    const go = () => {
      const id = decodeURIComponent(location.hash.slice(1));
      const o = byId.get(id);
      if (current) current.a.removeAttribute('aria-current');
      current = null;
      if (!o) return;
      o.el.hidden = false;
      o.el.open = true;
      current = links.get(id);
      current.a.setAttribute('aria-current', 'true');
      if (o.el.scrollIntoView) o.el.scrollIntoView({ block: 'start' });
      const s = o.el.querySelector && o.el.querySelector('summary');
      if (s) s.focus({ preventScroll: true });
    };
    window.addEventListener('hashchange', go);
    go();
  }

  // wireAuth keeps the credential inputs in sync with sessionStorage.
  function wireAuth() {
    const token = $('auth-token');
    const key = $('auth-key');
    token.value = storage(STORE.token);
    key.value = storage(STORE.key);
    token.addEventListener('input', () => storage(STORE.token, token.value.trim()));
    key.addEventListener('input', () => storage(STORE.key, key.value.trim()));
    $('auth-clear').addEventListener('click', () => { token.value = storage(STORE.token, ''); key.value = storage(STORE.key, ''); });
  }

  // init wires the header and loads the OpenAPI document.
  async function init() {
    wireAuth();
    const status = $('load-status');
    try {
      const res = await fetch(SPEC_URL, { headers: { Accept: 'application/json' }, cache: 'no-cache' });
      if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
      render(await res.json());
    } catch (e) {
      status.className = 'status error';
      status.textContent = `Could not load the API description (${SPEC_URL}): ${e.message}`;
    }
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
