/**
 * The API reference as one self-contained HTML page, rendered from the
 * OpenAPI document: operations by tag with their parameters, bodies,
 * responses and examples, then every schema. No script, font or style from
 * elsewhere (a stage's page must not depend on a CDN, and this renders the
 * same offline).
 */

type Json = Record<string, unknown>;

const html = (text: unknown) =>
  String(text)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');

/** The little Markdown the document's descriptions use: `code`, **bold**, and lists of `- ` lines. */
function markdown(text: unknown): string {
  if (text === undefined) return '';
  const inline = (line: string) =>
    html(line)
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  const blocks = String(text).split(/\n\s*\n/);
  return blocks
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((l) => l.startsWith('- '))) {
        return `<ul>${lines.map((l) => `<li>${inline(l.slice(2))}</li>`).join('')}</ul>`;
      }
      return `<p>${inline(block)}</p>`;
    })
    .join('');
}

const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const anchor = (kind: string, name: string) => `${kind}-${name.replace(/[^\w-]/g, '-')}`;
const schemaLink = (ref: string) =>
  `<a href="#${anchor('schema', refName(ref))}"><code>${html(refName(ref))}</code></a>`;

/** A schema in a few words: its type and constraints, with links to the named schemas it uses. */
function typeOf(schema: Json | undefined): string {
  if (!schema) return '';
  if (typeof schema.$ref === 'string') return schemaLink(schema.$ref);
  const alternatives = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (alternatives) return alternatives.map(typeOf).join(' | ');
  if ('const' in schema) return `<code>${html(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum))
    return schema.enum.map((v) => `<code>${html(JSON.stringify(v))}</code>`).join(' | ');
  if (schema.not && Object.keys(schema.not as Json).length === 0) return 'nothing';
  const facts: string[] = [];
  const bound = (key: string, text: string) => {
    const value = schema[key];
    // Safe-integer bounds say only "an integer", which the type says already.
    if (typeof value === 'number' && Math.abs(value) < Number.MAX_SAFE_INTEGER)
      facts.push(`${text} ${value}`);
  };
  bound('minimum', '≥');
  bound('maximum', '≤');
  bound('minLength', 'length ≥');
  bound('maxLength', 'length ≤');
  bound('minItems', 'items ≥');
  bound('maxItems', 'items ≤');
  if (typeof schema.format === 'string') facts.push(`format ${html(schema.format)}`);
  else if (typeof schema.pattern === 'string' && schema.pattern.length <= 40)
    facts.push(`matches <code>${html(schema.pattern)}</code>`);
  let type = html(schema.type ?? 'any');
  if (schema.type === 'array') type = `array of ${typeOf(schema.items as Json)}`;
  return facts.length ? `${type} <span class="facts">(${facts.join(', ')})</span>` : type;
}

const example = (value: unknown) =>
  value === undefined ? '' : `<pre class="example">${html(JSON.stringify(value, null, 2))}</pre>`;

function propertiesTable(schema: Json): string {
  const properties = schema.properties as Record<string, Json> | undefined;
  if (!properties) return `<p>${typeOf(schema)}</p>`;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const rows = Object.entries(properties).map(
    ([name, p]) =>
      `<tr><td><code>${html(name)}</code>${required.has(name) ? '' : ' <span class="opt">optional</span>'}</td>` +
      `<td>${typeOf(p)}${p.type === 'object' && p.properties ? propertiesTable(p) : ''}${
        p.type === 'array' && (p.items as Json | undefined)?.properties
          ? propertiesTable(p.items as Json)
          : ''
      }</td><td>${markdown(p.description)}</td></tr>`,
  );
  const closed = schema.additionalProperties === false ? '<p class="facts">No other fields.</p>' : '';
  return `<table><tr><th>field</th><th>type</th><th></th></tr>${rows.join('')}</table>${closed}`;
}

function parameterRows(parameters: Json[], components: Record<string, Json>): string {
  if (parameters.length === 0) return '';
  const rows = parameters.map((p) => {
    const param = typeof p.$ref === 'string' ? components[refName(p.$ref)]! : p;
    return (
      `<tr><td><code>${html(param.name)}</code>${param.required ? '' : ' <span class="opt">optional</span>'}</td>` +
      `<td>${html(param.in)}</td><td>${typeOf(param.schema as Json)}</td><td>${markdown(param.description)}</td></tr>`
    );
  });
  return `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th></th></tr>${rows.join('')}</table>`;
}

function media(content: Record<string, Json> | undefined): string {
  if (!content) return '';
  return Object.entries(content)
    .map(([type, m]) => `<p><code>${html(type)}</code> ${typeOf(m.schema as Json)}</p>${example(m.example)}`)
    .join('');
}

/**
 * Who may call an operation, from its `security`: no token (an empty list), or a bearer token with
 * any one of the scopes its requirements name.
 */
function accessLine(security: Record<string, string[]>[] | undefined): string {
  if (security === undefined) return '';
  if (security.length === 0) return '<p class="access">No token.</p>';
  const scopes = security.flatMap((requirement) => Object.values(requirement).flat());
  const named = scopes.map((scope) => `<code>${html(scope)}</code>`).join(' or ');
  return `<p class="access">Bearer token with the scope ${named}: <a href="#authentication">how to get one</a>.</p>`;
}

function authenticationSection(schemes: Record<string, Json> | undefined): string {
  if (!schemes) return '';
  const rows = Object.entries(schemes).map(
    ([name, scheme]) =>
      `<tr><td><code>${html(name)}</code></td><td>${html(scheme.type)} ${html(scheme.scheme ?? '')} ${html(
        scheme.bearerFormat ?? '',
      )}</td><td>${markdown(scheme.description)}</td></tr>`,
  );
  return `<h2 id="authentication">Authentication</h2><p>Send <code>Authorization: Bearer &lt;token&gt;</code>; each operation says which scopes it accepts.</p><table><tr><th>scheme</th><th>type</th><th></th></tr>${rows.join('')}</table>`;
}

function operationSection(method: string, path: string, op: Json, parameters: Record<string, Json>): string {
  const id = anchor('op', String(op.operationId));
  const body = op.requestBody as { content?: Record<string, Json> } | undefined;
  const responses = Object.entries(op.responses as Record<string, Json>).map(([status, r]) => {
    const headers = Object.entries((r.headers as Record<string, Json> | undefined) ?? {})
      .map(
        ([name, h]) => `<code>${html(name)}</code>${h.required ? '' : ' <span class="opt">optional</span>'}`,
      )
      .join(', ');
    return (
      `<tr><td class="status s${html(status[0])}">${html(status)}</td><td>${markdown(r.description)}` +
      `${headers ? `<p class="facts">Headers: ${headers}</p>` : ''}</td>` +
      `<td>${media(r.content as Record<string, Json> | undefined)}</td></tr>`
    );
  });
  return `<section class="op" id="${id}">
<h3><span class="method ${html(method)}">${html(method.toUpperCase())}</span> <code>${html(path)}</code> — ${html(op.summary)}</h3>
${accessLine(op.security as Record<string, string[]>[] | undefined)}
${markdown(op.description)}
${parameterRows((op.parameters as Json[] | undefined) ?? [], parameters)}
${body ? `<h4>Request body</h4>${media(body.content)}` : ''}
<h4>Responses</h4>
<table><tr><th>status</th><th></th><th>body</th></tr>${responses.join('')}</table>
</section>`;
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1d232a;display:flex}
nav{position:sticky;top:0;height:100vh;overflow:auto;width:17rem;flex:none;background:#f4f6f8;padding:1rem;box-sizing:border-box;font-size:14px}
nav ul{list-style:none;padding-left:.5rem;margin:.2rem 0 .8rem}
main{padding:1rem 2rem;max-width:70rem;min-width:0}
a{color:#0b5cad;text-decoration:none}
code,pre{font:13px/1.4 ui-monospace,monospace}
pre.example{background:#f4f6f8;padding:.5rem;overflow:auto;max-height:22rem}
table{border-collapse:collapse;width:100%;margin:.3rem 0}
td,th{border-top:1px solid #dde2e6;padding:.3rem .5rem;vertical-align:top;text-align:left}
table table{font-size:13px}
.op{border-top:2px solid #dde2e6;margin-top:1.5rem}
.method{display:inline-block;min-width:4.2rem;text-align:center;border-radius:3px;color:#fff;font-size:13px;padding:0 .3rem}
.get{background:#2f7d32}.post{background:#0b5cad}.delete{background:#b3261e}
.status{font-weight:600}.s2{color:#2f7d32}.s4{color:#9a5b00}.s5{color:#b3261e}
.opt,.facts{color:#5f6b76;font-size:13px}
.access{background:#fdf6e3;padding:.2rem .5rem;font-size:14px}
`;

/** The page for `document` (an OpenAPI 3.1 document as `openApiDocument` makes it). */
export function referencePage(document: Json): string {
  const info = document.info as Json;
  const paths = document.paths as Record<string, Record<string, Json>>;
  const components = document.components as {
    schemas: Record<string, Json>;
    parameters: Record<string, Json>;
    securitySchemes?: Record<string, Json>;
  };
  const tags = (document.tags as { name: string; description?: string }[]) ?? [];
  const operations = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  const byTag = tags.map((tag) => ({
    tag,
    ops: operations.filter(({ op }) => (op.tags as string[] | undefined)?.includes(tag.name)),
  }));
  const navigation = byTag
    .map(
      ({ tag, ops }) =>
        `<strong>${html(tag.name)}</strong><ul>${ops
          .map(
            ({ method, path, op }) =>
              `<li><a href="#${anchor('op', String(op.operationId))}">${html(method.toUpperCase())} ${html(path)}</a></li>`,
          )
          .join('')}</ul>`,
    )
    .join('');
  const schemaNames = Object.keys(components.schemas);
  const sections = byTag
    .map(
      ({ tag, ops }) =>
        `<h2 id="${anchor('tag', tag.name)}">${html(tag.name)}</h2>${markdown(tag.description)}${ops
          .map(({ method, path, op }) => operationSection(method, path, op, components.parameters))
          .join('')}`,
    )
    .join('');
  const schemas = schemaNames
    .map((name) => {
      const schema = components.schemas[name]!;
      return `<section class="op" id="${anchor('schema', name)}"><h3><code>${html(name)}</code></h3>${markdown(
        schema.description,
      )}${propertiesTable(schema)}${((schema.examples as unknown[] | undefined) ?? []).map(example).join('')}</section>`;
    })
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${html(info.title)} — API reference</title><style>${STYLE}</style></head>
<body><nav><p><strong>${html(info.title)}</strong><br>v${html(info.version)} · <a href="openapi.json">openapi.json</a></p>
<strong><a href="#authentication">Authentication</a></strong><br>${navigation}<strong><a href="#schemas">Schemas</a></strong><ul>${schemaNames
    .map((n) => `<li><a href="#${anchor('schema', n)}">${html(n)}</a></li>`)
    .join('')}</ul></nav>
<main><h1>${html(info.title)}</h1><p class="facts">OpenAPI ${html(document.openapi)} · version ${html(info.version)} · the document: <a href="openapi.json"><code>GET /openapi.json</code></a></p>
${markdown(info.description)}${authenticationSection(components.securitySchemes)}${sections}<h2 id="schemas">Schemas</h2>${schemas}</main></body></html>
`;
}
