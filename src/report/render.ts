import type {
  BatchReport,
  BatchReportItem,
  PipelineReport,
  Report,
  ReportCredits,
  ReportImage,
  ReportItem,
  ReportStep,
  ReportVideo,
} from './model';
import { approvalHtml } from './approval';

/**
 * One self-contained HTML page per report: inline CSS (and, for a batch, a few lines of inline
 * script for the state filters), media embedded as data URIs or next to the page. No server, no
 * CDN; a Content-Security-Policy keeps the page from loading anything from the network.
 */

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}
const h = escapeHtml;

/** `5.0 s`, `2 min 05 s`, or an em dash for unknown. */
export function formatSeconds(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  if (value < 60) return `${value.toFixed(1)} s`;
  const minutes = Math.floor(value / 60);
  return `${minutes} min ${String(Math.round(value % 60)).padStart(2, '0')} s`;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} B`;
}

function resolution(video: ReportVideo): string {
  return video.width && video.height ? `${video.width}×${video.height}` : '—';
}

const CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--card:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--accent:#0550ae}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#30363d;--card:#161b22;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--accent:#58a6ff}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
main{max-width:72rem;margin:0 auto;padding:1rem}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,video:focus-visible,[tabindex]:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem;z-index:1}
h1{font-size:1.6rem;margin:.5rem 0;overflow-wrap:anywhere}h2{font-size:1.25rem;margin:0 0 .5rem;overflow-wrap:anywhere}
.meta{color:var(--muted);margin:0 0 1rem}
dl.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,9.5rem),1fr));gap:.5rem;margin:0 0 1.5rem}
dl.facts div{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.5rem .75rem}
dt{color:var(--muted);font-size:.85rem}dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.state{display:inline-block;border-radius:999px;padding:0 .6rem;font-size:.85rem;font-weight:600;border:1px solid currentColor}
.state-completed{color:var(--ok)}.state-failed,.state-budget-exceeded,.state-rejected{color:var(--bad)}.state-cancelled,.state-completed-too-late,.state-skipped{color:var(--warn)}.state-running,.state-pending{color:var(--accent)}
.steps{display:grid;gap:1rem}
.step,.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem;min-width:0}
.step-head{display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline;justify-content:space-between}
.media{display:grid;gap:.75rem;margin:.75rem 0}
@media (min-width:56rem){.step-body{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:1rem;align-items:start}.step-body .media{margin:.5rem 0 0}}
video{width:100%;max-height:70vh;background:#000;border-radius:6px;display:block}
figure{margin:0}figcaption{color:var(--muted);font-size:.9rem;margin-top:.25rem}
.problem{color:var(--bad);font-weight:600}
.items{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,14rem),1fr));gap:.75rem;margin:.75rem 0}
img.output{max-width:100%;height:auto;border-radius:6px;display:block}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{color:var(--muted);font-weight:600;white-space:nowrap}
code{font:.85rem ui-monospace,SFMono-Regular,Menlo,monospace;overflow-wrap:anywhere}
.gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,18rem),1fr));gap:1rem;padding:0;list-style:none;margin:1rem 0}
.filters{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0}
.filters button{font:inherit;padding:.35rem .8rem;border-radius:999px;border:1px solid var(--line);background:var(--card);color:var(--fg);cursor:pointer;min-height:44px}
.filters button[aria-pressed=true]{background:var(--accent);border-color:var(--accent);color:#fff}
details summary{cursor:pointer;padding:.6rem 0;color:var(--accent)}
footer{color:var(--muted);font-size:.85rem;margin:2rem 0 1rem}
`;

const CSP =
  "default-src 'none'; img-src data:; media-src data: 'self' file:; style-src 'unsafe-inline'; script-src 'unsafe-inline'";

function page(title: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="generator" content="reelflow report">
<title>${h(title)}</title>
<style>${CSS}</style>
</head>
<body>
<a class="skip" href="#content">Skip to content</a>
<main id="content">
${body}
</main>
${script ? `<script>${script}</script>` : ''}
</body>
</html>
`;
}

function stateBadge(state: string): string {
  return `<span class="state state-${h(state.replace(/[^a-z-]/g, ''))}">${h(state)}</span>`;
}

function facts(entries: Array<[string, string]>): string {
  return `<dl class="facts">${entries.map(([k, v]) => `<div><dt>${h(k)}</dt><dd>${v}</dd></div>`).join('')}</dl>`;
}

function creditsText(c: ReportCredits): string {
  return `${c.net} net (charged ${c.charged}, refunded ${c.refunded})`;
}

/** The player: poster frame, metadata to preload, the poster as an <img> with alt text as fallback content. */
function player(video: ReportVideo, label: string, id: string): string {
  if (video.problem || !video.src) {
    return `<p class="problem" role="alert">${h(label)}: ${h(video.problem ?? 'no playable file')}</p>`;
  }
  if (video.contentType.startsWith('image/')) return still(video, label, id);
  const describe = `${label}: ${formatSeconds(video.durationSeconds)}, ${resolution(video)}`;
  const alt = `Poster frame of ${label}${video.posterAtSeconds !== null ? ` at ${video.posterAtSeconds.toFixed(1)} s` : ''}`;
  return `<figure>
<video id="${h(id)}" controls preload="metadata" playsinline${video.poster ? ` poster="${h(video.poster)}"` : ''} aria-label="${h(describe)}" aria-describedby="${h(id)}-caption" data-expected-duration="${video.durationSeconds.toFixed(3)}" src="${h(video.src)}">
${video.poster ? `<img src="${h(video.poster)}" alt="${h(alt)}">` : ''}
<a href="${h(video.src)}">Download ${h(video.fileName)}</a>
</video>
<figcaption id="${h(id)}-caption">${h(formatSeconds(video.durationSeconds))} · ${h(resolution(video))}${video.videoCodec ? ` · ${h(video.videoCodec)}` : ''} · ${h(formatBytes(video.bytes))} · <a href="${h(video.url)}">service URL</a>${video.archivedFrom ? ' · archived copy shown' : ''}</figcaption>
</figure>`;
}

/** An image output (an op step's frame): the image itself, its size and where it came from. */
function still(video: ReportVideo, label: string, id: string): string {
  return `<figure>
<img id="${h(id)}" src="${h(video.src)}" alt="${h(`${label}: an image, ${resolution(video)}`)}" aria-describedby="${h(id)}-caption">
<figcaption id="${h(id)}-caption">${h(resolution(video))} · ${h(formatBytes(video.bytes))}${video.archivedFrom ? ' · from the media store' : ''}</figcaption>
</figure>`;
}

function stepSection(step: ReportStep, index: number): string {
  const t = step.timings;
  const rows: Array<[string, string]> = [
    ['Model', `<code>${h(step.model)}</code>`],
    [
      'Credits',
      `${h(step.credits.net)} net (quoted ${h(step.credits.quoted)}, charged ${h(step.credits.charged)}, refunded ${h(step.credits.refunded)})`,
    ],
    ['Queued', h(formatSeconds(t.queuedSeconds))],
    ['Rendering', h(formatSeconds(t.renderingSeconds))],
    ['Handing off', h(formatSeconds(t.handoffSeconds))],
    ['Attempts', h(step.attempts)],
    ['Request ids', step.requestIds.length ? step.requestIds.map((id) => `<code>${h(id)}</code>`).join('<br>') : '—'],
  ];
  for (const video of step.videos) {
    if (video.problem) continue;
    rows.push(['Duration', h(formatSeconds(video.durationSeconds))], ['Resolution', h(resolution(video))]);
  }
  if (step.approval) rows.splice(0, rows.length, ['Kind', 'approval gate'], ['Decision', h(step.approval.state)]);
  const images = (step.images ?? []).map((image, i) => imageFigure(image, `step ${step.id} image ${i + 1}`));
  const videos = step.approval
    ? approvalHtml(step.approval, `step ${step.id}`, h)
    : step.videos.length || images.length
      ? `<div class="media">${step.videos.map((v, i) => player(v, `step ${step.id} output ${i + 1}`, `video-${index + 1}-${i + 1}`)).join('\n')}${images.join('\n')}</div>`
      : step.items
        ? ''
        : `<p class="meta">No output${step.status === 'running' || step.status === 'pending' ? ' yet' : ''}.</p>`;
  return `<section class="step" aria-labelledby="step-${index + 1}" data-step="${h(step.id)}" data-state="${h(step.status)}">
<div class="step-head"><h2 id="step-${index + 1}">${index + 1}. ${h(step.id)}</h2>${stateBadge(step.status)}</div>
${step.dependsOn?.length ? `<p class="meta">After ${step.dependsOn.map((id) => `<code>${h(id)}</code>`).join(', ')}</p>\n` : ''}${step.items ? itemsRow(step, index) : ''}<div class="step-body">${videos}
<div class="table-wrap" role="region" aria-label="Details of step ${h(step.id)}" tabindex="0"><table><tbody>${rows.map(([k, v]) => `<tr><th scope="row">${h(k)}</th><td>${v}</td></tr>`).join('')}</tbody></table></div></div>
${step.error ? `<p class="problem">${h(step.error)}</p>` : ''}
</section>`;
}

/** An output image of a graph's step (a frame), or why it is missing. */
function imageFigure(image: ReportImage, label: string): string {
  if (image.problem || !image.src)
    return `<p class="problem" role="alert">${h(label)}: ${h(image.problem ?? 'no image')}</p>`;
  const size = image.width && image.height ? `${image.width}×${image.height}` : '—';
  return `<figure><img class="output" src="${h(image.src)}" alt="${h(`${label}, ${size}`)}" width="${h(image.width)}" height="${h(image.height)}">
<figcaption>${h(size)} · ${h(formatBytes(image.bytes))} · <a href="${h(image.url)}">service URL</a>${image.archivedFrom ? ' · archived copy shown' : ''}</figcaption></figure>`;
}

/** A fan-out step's items as a row: each with its index, state, players and images. */
function itemsRow(step: ReportStep, index: number): string {
  const cell = (item: ReportItem) => {
    const label = `step ${step.id} item ${item.index}`;
    const media = [
      ...item.videos.map((v, i) =>
        player(v, `${label} output ${i + 1}`, `video-${index + 1}-item-${item.index}-${i + 1}`),
      ),
      ...item.images.map((image, i) => imageFigure(image, `${label} image ${i + 1}`)),
    ];
    return `<div class="item" role="listitem" data-item="${h(item.index)}" data-state="${h(item.status)}">
<p>[${h(item.index)}] ${stateBadge(item.status)}${item.requestIds.length ? ` <code>${h(item.requestIds.at(-1))}</code>` : ''}</p>
${media.join('\n') || `<p class="meta">No output${item.status === 'running' || item.status === 'pending' ? ' yet' : ''}.</p>`}
${item.error ? `<p class="problem">${h(item.error)}</p>` : ''}</div>`;
  };
  return `<div class="items" role="list" aria-label="Items of step ${h(step.id)}">${(step.items ?? []).map(cell).join('\n')}</div>\n`;
}

/** The page of one pipeline: header facts, then one section per step with its players (a graph's in graph order, with its items). */
export function renderPipelineReport(report: PipelineReport): string {
  const totalSeconds = report.steps
    .flatMap((s) => [...s.videos, ...(s.items ?? []).flatMap((item) => item.videos)])
    .reduce((sum, v) => sum + (v.problem ? 0 : v.durationSeconds), 0);
  const head = `<h1>Pipeline ${h(report.name)}</h1>
<p class="meta">${stateBadge(report.status)} <code>${h(report.workflowId)}</code>${report.temporalUiUrl ? ` · <a href="${h(report.temporalUiUrl)}">open in the Temporal UI</a>` : ''}</p>
${facts([
  ['Steps', h(report.steps.map((s) => s.id).join(report.version === 2 ? ', ' : ' → '))],
  ['Credits', h(creditsText(report.ledger))],
  ['Budget', report.budgetCredits === null ? 'none' : h(report.budgetCredits)],
  ['Video', h(formatSeconds(totalSeconds))],
  [
    'Started',
    report.startedAt
      ? `<time datetime="${h(report.startedAt)}">${h(report.startedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time>`
      : '—',
  ],
  [
    'Closed',
    report.closedAt
      ? `<time datetime="${h(report.closedAt)}">${h(report.closedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))}</time>`
      : 'still running',
  ],
])}
${report.error ? `<p class="problem" role="alert">${h(report.error)}</p>` : ''}`;
  const body = `${head}<div class="steps">${report.steps.map(stepSection).join('\n')}</div>
<footer>Generated by <code>reelflow report</code> at ${h(report.generatedAt)}. Durations and resolutions are ffprobe's; poster frames come from ffmpeg.</footer>`;
  return page(`${report.name} — reelflow report`, body);
}

function card(item: BatchReportItem, index: number): string {
  const video = item.finalVideo
    ? player(item.finalVideo, `${item.name}, final output`, `video-${index + 1}`)
    : `<p class="meta">No output${item.status === 'running' ? ' yet' : ''}.</p>`;
  return `<li class="card" data-state="${h(item.status)}" aria-labelledby="item-${index + 1}">
<div class="step-head"><h2 id="item-${index + 1}">${h(item.name)}</h2>${stateBadge(item.status)}</div>
${video}
<p>${item.ledger ? `Credits: ${h(creditsText(item.ledger))}` : 'Credits: —'}${item.temporalUiUrl ? ` · <a href="${h(item.temporalUiUrl)}">Temporal UI</a>` : ''}</p>
${item.error ? `<p class="problem">${h(item.error)}</p>` : ''}
<details><summary>Steps and request ids</summary>
<div class="table-wrap" role="region" aria-label="Steps of ${h(item.name)}" tabindex="0"><table><thead><tr><th scope="col">Step</th><th scope="col">State</th><th scope="col">Request ids</th></tr></thead><tbody>
${item.steps.map((s) => `<tr><td>${h(s.id)}</td><td>${h(s.status)}</td><td>${s.requestIds.map((r) => `<code>${h(r)}</code>`).join('<br>') || '—'}</td></tr>`).join('')}
</tbody></table></div></details>
</li>`;
}

/** Shows only the cards of the chosen state; every button says whether it is pressed. */
const FILTER_SCRIPT = `
(function(){
  var buttons=document.querySelectorAll('.filters button');
  var cards=document.querySelectorAll('.gallery > li');
  var status=document.getElementById('filter-status');
  buttons.forEach(function(b){b.addEventListener('click',function(){
    var state=b.getAttribute('data-filter');var shown=0;
    buttons.forEach(function(o){o.setAttribute('aria-pressed',String(o===b));});
    cards.forEach(function(c){var show=state==='all'||c.getAttribute('data-state')===state;c.hidden=!show;if(show)shown++;});
    status.textContent=shown+' of '+cards.length+' shown';
  });});
})();
`;

/** Where one page of a paged batch gallery sits among the others. */
export interface GalleryPage {
  /** From 1. */
  number: number;
  count: number;
  /** The file name (relative link) of page `n`. */
  href: (n: number) => string;
  /** Index of this page's first item in `report.items`. */
  first: number;
  size: number;
}

function pageNav(gallery: GalleryPage): string {
  if (gallery.count <= 1) return '';
  const link = (n: number, text: string, rel?: string) =>
    n === gallery.number
      ? `<span aria-current="page">${h(text)}</span>`
      : `<a href="${h(gallery.href(n))}"${rel ? ` rel="${rel}"` : ''}>${h(text)}</a>`;
  const numbers = Array.from({ length: gallery.count }, (_, i) => i + 1).filter(
    (n) => n === 1 || n === gallery.count || Math.abs(n - gallery.number) <= 3,
  );
  const parts: string[] = [];
  numbers.forEach((n, i) => {
    if (i > 0 && n - (numbers[i - 1] as number) > 1) parts.push('…');
    parts.push(link(n, String(n)));
  });
  return `<nav class="pages" aria-label="Gallery pages">${gallery.number > 1 ? `${link(gallery.number - 1, 'Previous', 'prev')} ` : ''}${parts.join(' ')}${gallery.number < gallery.count ? ` ${link(gallery.number + 1, 'Next', 'next')}` : ''}</nav>`;
}

/** A paused batch's reason and what ends the pause (nothing when it is not paused). */
function pausedNote({ paused, workflowId }: BatchReport): string {
  if (!paused) return '';
  return `\n<p class="meta">Paused (${h(paused.code)}): ${h(paused.reason)}. ${h(paused.waiting)} item(s) wait; after a top-up or a new key: <code>reelflow batch resume ${h(workflowId)}</code></p>`;
}

/**
 * The page of a batch: totals, state filters, a gallery card per pipeline with its final output
 * (poster and link; the file is beside the page or embedded when small). A large batch is split
 * into pages (`gallery`): each has the totals and the navigation, and its own slice of the cards.
 */
export function renderBatchReport(report: BatchReport, gallery?: GalleryPage): string {
  const items = gallery ? report.items.slice(gallery.first, gallery.first + gallery.size) : report.items;
  const offset = gallery?.first ?? 0;
  const states = Object.entries(report.totals.byState).filter(([, n]) => n > 0);
  const filters = `<div class="filters" role="group" aria-label="Show pipelines by state">
<button type="button" data-filter="all" aria-pressed="true">All (${items.length})</button>
${states.map(([state, n]) => `<button type="button" data-filter="${h(state)}" aria-pressed="false">${h(state)} (${gallery && gallery.count > 1 ? `${items.filter((i) => i.status === state).length} of ${n}` : n})</button>`).join('\n')}
</div>
<p id="filter-status" class="meta" role="status" aria-live="polite">${items.length} of ${items.length} shown</p>`;
  const nav = gallery ? pageNav(gallery) : '';
  const body = `<h1>Batch ${h(report.name)}${gallery && gallery.count > 1 ? ` · page ${gallery.number} of ${gallery.count}` : ''}</h1>
<p class="meta">${stateBadge(report.status)} <code>${h(report.workflowId)}</code></p>${pausedNote(report)}
${facts([
  ['Pipelines', h(report.totals.items)],
  ...states.map(([state, n]): [string, string] => [state, h(n)]),
  ['Credits', h(creditsText(report.totals.credits))],
  ['Video', h(formatSeconds(report.totals.videoSeconds))],
])}
${nav}
${filters}
<ul class="gallery">${items.map((item, index) => card(item, offset + index)).join('\n')}</ul>
${nav}
<footer>Generated by <code>reelflow report</code> at ${h(report.generatedAt)}. Durations and resolutions are ffprobe's; poster frames come from ffmpeg.</footer>`;
  return page(
    `${report.name} — reelflow batch report${gallery && gallery.count > 1 ? ` (page ${gallery.number})` : ''}`,
    body,
    FILTER_SCRIPT,
  );
}

/** The page for either kind. */
export function renderReport(report: Report): string {
  return report.kind === 'pipeline' ? renderPipelineReport(report) : renderBatchReport(report);
}
