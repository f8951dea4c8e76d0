// The page's one door to the server: POST a command's fields, get the CLI's --json back.
export async function api(path, fields) {
  const init = fields === undefined ? { method: 'GET' }
    : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(fields) };
  const res = await fetch(path, init);
  const body = await res.json();
  if (!res.ok) {
    const err = new Error(body.error || `HTTP ${res.status}`);
    err.field = body.field;
    err.status = res.status;
    throw err;
  }
  return body;
}
