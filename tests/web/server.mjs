// Starts `chalk web --port 0 ARGS...` for a test and says where it listens; a raw HTTP client that
// sends paths exactly as written (fetch would normalise "../").
import { spawn } from 'node:child_process';
import http from 'node:http';

export async function startServer(chalk, args = [], env = process.env) {
  const proc = spawn(chalk, ['web', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`chalk web printed no address in 20 s: ${out}`)), 20000);
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) { clearTimeout(timer); resolve(`http://127.0.0.1:${m[1]}`); }
    });
    proc.on('exit', (code) => reject(new Error(`chalk web exited ${code}: ${out}`)));
  });
  return { url, port: Number(new URL(url).port), stop: () => proc.kill('SIGTERM'), proc };
}

/// One request with the path sent verbatim: {status, headers, body (string)}.
export function raw(port, method, path, body, headers = {}) {
  return new Promise((resolve, reject) => {
    // A new connection per request (agent: false, Connection: close). Node 20's global agent
    // keeps sockets alive, and a socket left idle while the test runs the CLI for comparison
    // can meet the server's 5 s keep-alive close just as the next request goes out on it:
    // "socket hang up" (the web.api failure in CI at 5247b39).
    const req = http.request({ host: '127.0.0.1', port, method, path, agent: false, headers: { Connection: 'close', ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } : {}) } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/// A JSON value against an OpenAPI 3.0 schema (the subset web/openapi.json uses: type,
/// nullable, properties, required, additionalProperties: false, items, oneOf, $ref).
/// Returns a list of problems, empty when it conforms.
export function conform(value, schema, doc, path = '$') {
  if (schema.$ref) schema = schema.$ref.split('/').slice(1).reduce((o, k) => o[k], doc);
  if (value === null) return schema.nullable || Object.keys(schema).length === 0 ? [] : [`${path}: null where ${schema.type} expected`];
  if (schema.oneOf) return schema.oneOf.some((s) => conform(value, s, doc, path).length === 0) ? [] : [`${path}: ${JSON.stringify(value).slice(0, 60)} matches none of oneOf`];
  const t = schema.type;
  const actual = Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value;
  if (t && !(t === actual || (t === 'number' && actual === 'integer'))) return [`${path}: ${actual} where ${t} expected`];
  const out = [];
  if (actual === 'object') {
    for (const k of schema.required || []) if (!(k in value)) out.push(`${path}: missing ${k}`);
    for (const [k, v] of Object.entries(value)) {
      if (schema.properties && k in schema.properties) out.push(...conform(v, schema.properties[k], doc, `${path}.${k}`));
      else if (schema.additionalProperties === false) out.push(`${path}: unexpected key ${k}`);
    }
  }
  if (actual === 'array' && schema.items) value.forEach((v, i) => out.push(...conform(v, schema.items, doc, `${path}[${i}]`)));
  return out;
}
