#!/usr/bin/env python3
"""Writes web/openapi.json, the description of `chalk web`'s API, from the binary itself.

Request bodies: each endpoint's fields are its CLI command's long flags (read from
`chalk <command> --help`: INT -> integer, FLOAT -> number, TEXT -> string, number or list,
a flag -> boolean). Responses: the schema of the JSON the command prints under --json,
read from the example requests below (types per key, arrays by their items), with the
one output vocabulary's types (docs/output-schema.json) for the keys it names.

  openapi_gen.py CHALK SRC          rewrite SRC/web/openapi.json
  openapi_gen.py --check CHALK SRC  exit 1 if SRC/web/openapi.json differs (a ctest)
"""
import json, re, subprocess, sys

# (path, CLI words, GET?, example CLI arguments for the response schema, positional field)
ENDPOINTS = [
    ("/api/models", ["models"], True, [], None),
    ("/api/hardware", ["hardware"], True, [], None),
    ("/api/decode", ["decode"], False, [["-m", "llama-3.1-70b", "-H", "h100-sxm", "-n", "2", "-b", "1,64", "--explain"],
                                       ["-m", "llama-3.1-70b", "-H", "h100-sxm", "-b", "1,64", "-s", "8192"],  # -b's replica: runner_up null
                                       ["-m", "deepseek-v3", "-b", "1,256"]], None),
    ("/api/prefill", ["prefill"], False, [["-m", "llama-3.1-70b", "-H", "h100-sxm", "-p", "1024", "--explain"], ["-m", "deepseek-v3"]], None),
    ("/api/serving/sweep", ["serving", "sweep"], False, [["-m", "llama-3.1-8b", "-H", "h100-sxm", "-b", "1,64"], ["-m", "llama-3.1-8b", "-H", "h100-sxm", "-b", "64", "--explain"]], None),
    ("/api/serving/balance", ["serving", "balance"], False, [["-m", "llama-3.1-8b", "-H", "h100-sxm"], ["-m", "llama-3.1-8b", "-H", "h100-sxm", "-s", "128", "--explain"]], None),
    ("/api/serving/window", ["serving", "window"], False, ["-m", "llama-3.1-8b", "-H", "h100-sxm"], None),
    ("/api/serving/frontier", ["serving", "frontier"], False, ["-m", "llama-3.1-8b", "-H", "h100-sxm", "-b", "1,64", "--replica-chips", "1,2"], None),
    ("/api/serving/modes", ["serving", "modes"], False, ["-m", "llama-3.1-70b", "-H", "h100-sxm"], None),
    ("/api/layouts", ["layouts"], False, [["-m", "deepseek-v3", "-H", "gb200-nvl72", "-n", "8"], ["-m", "deepseek-v3", "-H", "gb200-nvl72", "-n", "8", "--explain"]], None),
    ("/api/prices/list", ["prices", "list"], True, [], None),
    ("/api/prices/infer", ["prices", "infer"], False, ["gemini-1.5-pro"], "sheet"),
    ("/api/prices/forward", ["prices", "forward"], False, ["-m", "llama-3.1-8b", "-H", "h100-sxm"], None),
    ("/api/prices/compare", ["prices", "compare"], False, ["-m", "gpt-oss-120b", "-H", "h100-sxm,tpu-v5p"], None),
    ("/api/validate", ["validate"], False, [], None),
    ("/api/train/step", ["train", "step"], False, [["-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "8", "--dp", "8", "--zero", "2"], ["-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "8", "--dp", "8", "--zero", "2", "--explain"]], None),
    ("/api/train/memory", ["train", "memory"], False, [["-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "8", "--dp", "8", "--zero", "2"], ["-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "8", "--dp", "8", "--zero", "2", "--explain"]], None),
    ("/api/train/layouts", ["train", "layouts"], False, ["-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "64", "--limit", "3", "--all"], None),
    ("/api/train/run", ["train", "run"], False, ["-m", "llama-3.1-8b", "-H", "h100-sxm", "--tokens", "1e12", "--chips", "64", "--mfu", "0.4"], None),
    ("/api/train/chinchilla", ["train", "chinchilla"], False, ["--flops", "1e24", "--params", "8e9", "--tokens", "15e12"], None),
    ("/api/train/equilibrium", ["train", "equilibrium"], False, ["-m", "llama-3.1-70b", "-H", "h100-sxm"], None),
    ("/api/train/moe", ["train", "moe"], False, [], None),
    # A rate alone: rate_choice; --replicas: the cost floor's replica_choice (review 10 M1).
    ("/api/simulate", ["simulate"], False, [["-m", "llama-3.1-8b", "-H", "h100-sxm", "--rate", "10", "--requests", "300"],
                                            ["-m", "llama-3.1-8b", "-H", "h100-sxm", "--rate", "10", "--requests", "300", "--replicas", "1"]], None),
    ("/api/plan", ["plan"], False, [["-m", "llama-3.1-8b", "-H", "h100-sxm", "--rate", "10", "--requests", "300", "--ttft-slo-ms", "500", "--budget-chips", "4"],
                                    ["-m", "llama-3.1-8b", "-H", "h100-sxm", "--rate", "100000", "--requests", "200", "--tpot-slo-ms", "1", "--budget-chips", "1"]], None),
    ("/api/step", ["step"], False, ["-m", "llama-3.1-8b", "-H", "h100-sxm", "-n", "1", "--batches", '[{"prefill": [[512, 0]], "decode": [1024, 2048]}, {"decode": [1024]}]'], None),
]
# Fields whose value is JSON itself (web_api.h, ApiEndpoint::json_fields): their schema.
JSON_FIELDS = {("/api/step", "batches"): {
    "type": "array", "description": "the batches, each priced as one engine step (docs/simulator.md, 'chalk as a step-time predictor'): "
    "chalk's {prefill: [[tokens, cached], ...], decode: [context, ...]}, BLIS's StepConfig {prefill_requests: [{progress_index, "
    "num_new_prefill_tokens}], decode_requests: [{progress_index, num_new_decode_tokens: 1}]} or SGLang's {reqs: [{extend_length, "
    "past_kv_length}]}; at most 16,384 batches",
    "items": {"type": "object"}}}
FORBIDDEN = {"help", "json", "csv", "wide", "quiet", "version", "plot", "launch-dir", "trace", "engine-profile", "rate-curve"}


def options(chalk, words):
    """(long name, kind) of each option in `chalk WORDS --help`."""
    text = subprocess.run([chalk, *words, "--help"], capture_output=True, text=True, check=True).stdout
    out = []
    for line in text.splitlines():
        m = re.match(r"\s+(?:-\w,)?--([a-z0-9-]+)(?:\s+(INT|FLOAT|TEXT|UINT)(?:\s|=|:|$))?", line)
        if not m or m.group(1) in FORBIDDEN:
            continue
        rest = line[m.end(1):]
        kind = m.group(2) or ("list" if re.match(r"\s+TEXT\s+\.\.\.", rest) else "flag")
        if re.match(r"\s+TEXT", rest) and kind == "flag":
            kind = "TEXT"
        if re.match(r"\s+(INT|UINT)", rest):
            kind = "INT"
        if re.match(r"\s+FLOAT", rest):
            kind = "FLOAT"
        out.append((m.group(1), kind))
    return out


def field_schema(kind):
    if kind == "flag":
        return {"type": "boolean"}
    if kind == "INT":
        return {"oneOf": [{"type": "integer"}, {"type": "string"}]}
    if kind == "FLOAT":
        return {"oneOf": [{"type": "number"}, {"type": "string"}]}
    return {"oneOf": [{"type": "string"}, {"type": "number"}, {"type": "array", "items": {"oneOf": [{"type": "string"}, {"type": "number"}]}}]}


def infer(v, vocab):
    """A schema for the value v: objects with their keys required, arrays by their items."""
    if v is None:
        return {"nullable": True}
    if isinstance(v, bool):
        return {"type": "boolean"}
    if isinstance(v, int):
        return {"type": "number"}
    if isinstance(v, float):
        return {"type": "number"}
    if isinstance(v, str):
        return {"type": "string"}
    if isinstance(v, list):
        items = [infer(x, vocab) for x in v]
        merged = items[0] if items else {}
        for it in items[1:]:
            merged = merge(merged, it)
        return {"type": "array", "items": merged}
    props = {}
    for k, x in v.items():
        s = infer(x, vocab)
        t = vocab.get("keys", {}).get(k, "")
        if t in ("number|null", "integer|null", "string|null"):
            s = {"type": "number" if t.startswith("integer") else t.split("|")[0], "nullable": True}
        elif t in ("number", "integer", "boolean", "string") and "type" in s:
            s = {"type": "number" if t == "integer" else t, **({"nullable": True} if s.get("nullable") else {})}
        props[k] = s
    return {"type": "object", "required": sorted(v.keys()), "properties": props}


def merge(a, b):
    """The schema both a and b satisfy (keys required only when both have them)."""
    if a.get("nullable") and "type" not in a:
        return {**b, "nullable": True}
    if b.get("nullable") and "type" not in b:
        return {**a, "nullable": True}
    if a.get("type") != b.get("type"):
        return {}  # mixed types: anything
    out = dict(a)
    if a.get("nullable") or b.get("nullable"):
        out["nullable"] = True
    if a.get("type") == "object":
        props = dict(a["properties"])
        for k, s in b["properties"].items():
            props[k] = merge(props[k], s) if k in props else s
        out["properties"] = props
        out["required"] = sorted(set(a["required"]) & set(b["required"]))
    if a.get("type") == "array":
        out["items"] = merge(a.get("items", {}), b.get("items", {})) if a.get("items") and b.get("items") else a.get("items") or b.get("items") or {}
    return out


def build(chalk, src):
    vocab = json.load(open(f"{src}/docs/output-schema.json"))
    error = {"type": "object", "required": ["error", "field"], "properties": {
        "error": {"type": "string", "description": "'<field>: <what was wrong>', one line"},
        "field": {"type": "string", "description": "the request field at fault, as the request spelled it, else in snake_case "
                                                  "('body' for the body as a whole, 'path' for an unknown path); the error names "
                                                  "other fields in snake_case too, never as command-line flags"}}}
    doc = {"openapi": "3.0.3",
           "info": {"title": "chalk web API", "version": "0.1.0",
                    "description": "Each endpoint runs one chalk command and answers with the JSON its --json prints (docs/output-schema.md). "
                                   "POST bodies are JSON objects whose keys are the command's long flags in snake_case (kv_dtype; the flag's "
                                   "own spelling kv-dtype is an alias), plus "
                                   "model_config: an uploaded HF config.json (or chalk-model file) as an object, read with the CLI's validation. "
                                   "Models, systems and price sheets are built-in names (a HF repo id names the built-in config of its "
                                   "architecture; the local cache is not read); the server reads no file a request names. "
                                   "Only loopback Host and Origin names are answered (unless --allow-remote), POSTs must be "
                                   "application/json, and each request's work is bounded (413, 503). "
                                   "Generated by tests/web/openapi_gen.py."},
           "paths": {}, "components": {"schemas": {"Error": error}}}
    errors = {code: {"description": what, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
              for code, what in [("400", "malformed JSON, a body nested over 64 deep, an unknown field, a bad value or an unknown model, "
                                         "named in 'field'; also a path that is not UTF-8 ('path'), Content-Length with chunked "
                                         "('Transfer-Encoding'), a framing or origin header given twice (named), no Host ('Host'), a request not sent whole within 10 s ('request')"),
                                 ("403", "a Host or Origin that is not a loopback name (without --allow-remote; with it, an Origin "
                                         "other than the Host): 'Host' or 'Origin'"),
                                 ("404", "no such path"), ("405", "wrong method (OPTIONS, PUT, DELETE included)"),
                                 ("413", "body over 1 MiB ('body'); list fields whose product asks for more than 16,384 rows "
                                         "(the longest list); simulate and plan: work the request implies over the server's budget "
                                         "(--request-steps), refused before it starts ('requests' or 'max-batched-tokens')"),
                                 ("415", "a POST whose Content-Type is not application/json ('Content-Type')"),
                                 ("503", "the server is busy (no compute slot within 5 s), or the work was stopped: over the "
                                         "server's --request-seconds or --request-steps, its client gone, out of memory ('request')")]}
    for path, words, get, example, positional in ENDPOINTS:
        response = None
        for args in example if example and isinstance(example[0], list) else [example]:
            run = subprocess.run([chalk, *words, *args, "--json"], capture_output=True, text=True)
            # `chalk plan` exits 4 when no deployment meets the SLO; its JSON (best null) is the answer.
            if run.returncode not in ((0, 4) if words == ["plan"] else (0,)):
                raise subprocess.CalledProcessError(run.returncode, run.args, run.stdout, run.stderr)
            out = run.stdout
            s = infer(json.loads(out), vocab)
            response = s if response is None else merge(response, s)
        op = {"summary": f"chalk {' '.join(words)} --json", "operationId": "_".join(words),
              "responses": {"200": {"description": f"what `chalk {' '.join(words)} --json` prints",
                                    "content": {"application/json": {"schema": response}}}, **errors}}
        if not get:
            # Keys in the output vocabulary's snake_case (kv_dtype); the server takes the flag's own
            # kebab spelling (kv-dtype) too, as an alias.
            props = {name.replace("-", "_"): JSON_FIELDS.get((path, name)) or field_schema(kind) for name, kind in options(chalk, words)}
            if "model" in props:
                props["model_config"] = {"type": "object", "description": "an uploaded HF config.json or chalk-model file, instead of model"}
            if positional:
                props[positional] = {"type": "string", "description": "a built-in name"}
            op["requestBody"] = {"required": False, "content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False, "properties": props}}}}
        doc["paths"][path] = {"get" if get else "post": op}
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def main():
    args = sys.argv[1:]
    check = args and args[0] == "--check"
    if check:
        args = args[1:]
    chalk, src = args
    text = build(chalk, src)
    path = f"{src}/web/openapi.json"
    if check:
        if open(path).read() != text:
            sys.exit("web/openapi.json is out of date: run tests/web/openapi_gen.py build/release/chalk .")
        print("web/openapi.json is current")
    else:
        open(path, "w").write(text)


main()
