// gpuprobe's dashboard: the queue, recent jobs, and a job's rows with plots. Reads the daemon's
// JSON API (protobuf's JSON mapping, snake_case fields) and polls while anything runs. No
// dependencies: the plots are hand-drawn SVG.
'use strict';

const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4d7c0f',
                '#be185d', '#475569', '#b45309'];
// Series i's colour: the palette, then hues a golden angle apart, so that no two repeat.
const colorOf = (i) => (i < COLORS.length ? COLORS[i] : `hsl(${((i - COLORS.length) * 137.508 + 20) % 360} 70% 38%)`);
const TERMINAL = ['succeeded', 'failed', 'cancelled'];
let timer = null;

// A token given as ?token=... is kept for the session and sent with every request.
const token = new URLSearchParams(location.search).get('token') || sessionStorage.getItem('token');
if (token) sessionStorage.setItem('token', token);

async function api(path) {
  const res = await fetch(path, token ? {headers: {Authorization: 'Bearer ' + token}} : {});
  const body = await res.json();
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

const esc = (s) => String(s ?? '').replace(/[&<>"]/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
const state = (s) => s || '';
const variant = (v) => v || 'per-slot';
const fixed = (x, d) => (x === undefined || x === null ? '-' : Number(x).toFixed(d));
const when = (t) => (t ? new Date(t).toLocaleString() : '-');
const seconds = (a, b) => (a && b ? ((new Date(b) - new Date(a)) / 1000).toFixed(1) + ' s' : '-');

const verdict = (v) => (v ? v.replace(/-/g, ' ') : '-');

// A job's telemetry summary in one line, as `gpuprobe show` prints it.
function telemetry(t) {
  if (!t.available) return esc(t.note);
  const processes = (t.foreign_processes || []).map((p) => `${p.pid} ${esc(p.name)}`).join(', ');
  return `${t.samples} readings · SM ${t.sm_mhz_min}/${t.sm_mhz_median}/${t.sm_mhz_max} MHz (min/median/max) · ` +
    `memory ${t.memory_mhz_min}-${t.memory_mhz_max} MHz · ≤ ${fixed(t.power_w_max, 0)} W, ≤ ${t.temperature_c_max} C · ` +
    `throttle reasons: ${esc((t.throttle_reasons || []).join(', ')) || 'none'} · foreign processes: ${processes || 'none'}`;
}

function labels(job) {
  const req = job.request || {};
  const l = (req.sweep || req.check || {}).labels || {};
  return Object.entries(l).map(([k, v]) => `${esc(k)}=${esc(v)}`).join(' ');
}

function progressBar(done, total) {
  const pct = total ? Math.round((100 * done) / total) : 0;
  return `<span class="progress"><span style="width:${pct}%"></span></span> ${done}/${total} reps`;
}

// A fleet (a shared PostgreSQL store): every daemon's devices, lost ones marked.
function fleetLines(info) {
  if (info.store !== 'postgresql') return '';
  return '<br>fleet: ' + (info.fleet || []).map((f) => {
    const run = f.running_job_id
        ? `running <a href="#/jobs/${esc(f.running_job_id)}">${esc(f.running_job_id)}</a>` : 'idle';
    return `<span class="${f.state === 'lost' ? 'state-failed' : ''}">${esc(f.host)} #${f.index || 0} ${esc(f.model)} · ${esc(f.state)} · ${run}</span>`;
  }).join(' | ');
}

async function renderDevices() {
  const info = await api('/api/v1/info');
  document.getElementById('devices').innerHTML = (info.devices || []).map((d) => {
    const bw = d.details && d.details.calibrated_read_tbps
        ? ` · read ${fixed(d.details.calibrated_read_tbps, 2)} TB/s` : '';
    const run = d.running_job_id
        ? ` · running <a href="#/jobs/${esc(d.running_job_id)}">${esc(d.running_job_id)}</a> ${progressBar(d.running_reps_done || 0, d.running_reps_total || 0)}`
        : ' · idle';
    return `<span>device ${d.index}: ${esc(d.description)}${bw}${run}</span>`;
  }).join('<br>') + ` · queue ${info.queue_depth || 0}` + fleetLines(info);
  return info;
}

function jobsTable(jobs) {
  if (!jobs.length) return '<p class="muted">none</p>';
  return `<table><tr><th>job</th><th class="text">state</th><th class="text">labels</th>
    <th class="text">submitter</th><th>submitted</th><th>duration</th><th>results</th>
    <th class="text">device</th></tr>` + jobs.map((j) => `<tr>
    <td><a href="#/jobs/${esc(j.id)}">${esc(j.id)}</a></td>
    <td class="text state-${state(j.state)}">${state(j.state)}${j.queue_position ? ` (${j.queue_position} ahead)` : ''}</td>
    <td class="text">${labels(j)}</td><td class="text">${esc(j.submitter)}</td>
    <td>${when(j.created_at)}</td><td>${seconds(j.started_at, j.finished_at)}</td>
    <td>${j.results || 0}</td><td class="text">${esc(j.device)}</td></tr>`).join('') + '</table>';
}

async function renderHome() {
  const view = document.getElementById('view');
  const [live, recent] = await Promise.all([
    api('/api/v1/jobs?state=running&state=queued&page_size=100'),
    api('/api/v1/jobs?page_size=25'),
  ]);
  if (document.activeElement && document.activeElement.form) return true;  // typing in the form
  view.innerHTML = `<section><h2>Running and queued</h2>${jobsTable(live.jobs || [])}</section>
    <section><h2>Recent jobs</h2>${jobsTable(recent.jobs || [])}</section>${compareForm()}`;
  document.getElementById('compare-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const f = e.target;
    location.hash = `#/compare/${encodeURIComponent(f.base.value.trim())}/${encodeURIComponent(f.cand.value.trim())}`;
  });
  return true;  // keep polling
}

// Axis ticks from 0 at a round step (1, 2, 2.5 or 5 times a power of ten), 4 to 6 intervals,
// the last at or above max.
function roundTicks(max) {
  if (!(max > 0)) return [0, 1];
  const power = 10 ** Math.floor(Math.log10(max / 5));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((st) => max / st <= 6);
  const ticks = [];
  for (let k = 0; k * step < max + step * 1e-9; ++k) ticks.push(k * step);
  if (ticks[ticks.length - 1] < max) ticks.push(ticks.length * step);
  return ticks;
}

// Five ticks from lo to hi, for a y axis that does not start at 0.
function rangeTicks(lo, hi) {
  const pad = (hi - lo) * 0.05 || Math.abs(hi) * 0.01 || 1;
  return [0, 1, 2, 3, 4].map((k) => lo - pad + (k * (hi - lo + 2 * pad)) / 4);
}

// One SVG line plot: series of points {x, y, lo, hi, ref} with error bars and a marked
// reference; a series with `band: {lo, hi}` is a shaded band across the plot instead, and one
// with `line: false` is points alone. `zeroBased: false` fits the y axis to the data.
function plot({title, xLabel, yLabel, series, xTicks, zeroBased = true}) {
  const W = 620, H = 340, L = 64, R = 150, T = 28, B = 44;
  const pts = series.flatMap((s) => s.points);
  if (!pts.length) return '';
  const xs = pts.map((p) => p.x);
  const ys = [...pts.flatMap((p) => [p.lo ?? p.y, p.hi ?? p.y]),
              ...series.flatMap((s) => (s.band ? [s.band.lo, s.band.hi] : []))];
  const x0 = Math.min(...xs), x1 = Math.max(...xs) === x0 ? x0 + 1 : Math.max(...xs);
  const yTicks = zeroBased ? roundTicks(Math.max(...ys)) : rangeTicks(Math.min(...ys), Math.max(...ys));
  const y0 = zeroBased ? 0 : yTicks[0], y1 = yTicks[yTicks.length - 1];
  const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
  const sy = (y) => H - B - ((y - y0) / (y1 - y0)) * (H - T - B);
  let svg = `<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(title)}">`;
  svg += `<text x="${L}" y="16" style="font-size:13px;fill:#1d2330">${esc(title)}</text>`;
  for (const y of yTicks) {
    svg += `<line x1="${L}" x2="${W - R}" y1="${sy(y)}" y2="${sy(y)}" stroke="#eef0f4"/>`;
    svg += `<text class="tick" x="${L - 6}" y="${sy(y) + 4}" text-anchor="end">${+y.toPrecision(6)}</text>`;
  }
  const labelled = xTicks || [...new Set(xs)].sort((a, b) => a - b).map((x) => ({x, label: x}));
  for (const {x, label} of labelled) {
    svg += `<text x="${sx(x)}" y="${H - B + 16}" text-anchor="middle">${esc(label)}</text>`;
  }
  svg += `<text x="${(L + W - R) / 2}" y="${H - 6}" text-anchor="middle">${esc(xLabel)}</text>`;
  svg += `<text transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`;
  series.forEach((s, i) => {
    const c = s.color || colorOf(i);
    const ordered = [...s.points].sort((a, b) => a.x - b.x);
    const d = s.line === false ? ''
      : ordered.map((p, k) => `${k ? 'L' : 'M'}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join('');
    svg += `<g data-series="${esc(s.name)}">`;
    if (s.band) {
      svg += `<rect class="band" x="${L}" width="${W - L - R}" y="${sy(s.band.hi)}" height="${sy(s.band.lo) - sy(s.band.hi)}" fill="${c}" fill-opacity="0.12"/>`;
    }
    svg += `<path class="series" data-series="${esc(s.name)}" d="${d}" fill="none" stroke="${c}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>`;
    for (const p of s.markers === false ? [] : ordered) {
      if (p.lo !== undefined) {
        svg += `<line x1="${sx(p.x)}" x2="${sx(p.x)}" y1="${sy(p.lo)}" y2="${sy(p.hi)}" stroke="${c}" stroke-width="1"/>`;
      }
      svg += p.ref
        ? `<circle class="reference" cx="${sx(p.x)}" cy="${sy(p.y)}" r="6" fill="none" stroke="#111" stroke-width="2"><title>reference row</title></circle>`
        : `<circle cx="${sx(p.x)}" cy="${sy(p.y)}" r="3" fill="${c}">${p.job ? `<title>${esc(p.job)}</title>` : ''}</circle>`;
    }
    svg += `</g><g class="legend" data-series="${esc(s.name)}"><line x1="${W - R + 12}" x2="${W - R + 32}" y1="${T + 8 + i * 18}" y2="${T + 8 + i * 18}" stroke="${c}" stroke-width="${s.band ? 8 : 2}"${s.band ? ' stroke-opacity="0.25"' : ''}${s.dashed ? ' stroke-dasharray="5 3"' : ''}/>
      <text x="${W - R + 38}" y="${T + 12 + i * 18}">${esc(s.name)}</text></g>`;
  });
  return svg + '</svg>';
}

const axisValue = (a) => (a.int_value !== undefined ? Number(a.int_value) : a.text_value);

// A probe's results: a table of their axes, metrics (median, spread, 95%) and
// derived values, and a plot of the first metric against the first numeric axis, one series
// per value of the other axes.
function genericResults(results) {
  const first = results[0];
  const axes = first.axes.map((a) => a.name), metrics = first.metrics.map((m) => m), derived = (first.derived || []).map((d) => d);
  const table = `<table><tr>${axes.map((a) => `<th class="text">${esc(a)}</th>`).join('')}` +
    metrics.map((m) => `<th>${esc(m.name)} (${esc(m.unit || '-')})</th><th>spread</th><th class="text">95%</th>`).join('') +
    derived.map((d) => `<th>${esc(d.name)}${d.unit ? ` (${esc(d.unit)})` : ''}</th>`).join('') + '<th class="text">disturbance</th></tr>' +
    results.map((r) => `<tr class="row">${r.axes.map((a) => `<td class="text">${esc(axisValue(a))}</td>`).join('')}` +
      r.metrics.map((m) => `<td>${fixed(m.median, 3)}</td>` + (m.kept >= 2
        ? `<td>${fixed(m.spread, 4)}</td><td class="text">[${fixed(m.low, 3)}, ${fixed(m.high, 3)}]</td>`
        : '<td>-</td><td class="text">-</td>')).join('') +  // one sample: no spread, no interval
      (r.derived || []).map((d) => `<td>${+Number(d.value).toPrecision(4)}</td>`).join('') +
      `<td class="text">${r.disturbance ? `<span class="disturbed" title="${esc(r.disturbance)}">disturbed</span>` : '-'}</td></tr>`).join('') + '</table>';
  const xIndex = first.axes.findIndex((a) => a.int_value !== undefined);
  let chart = '<p class="muted">No plot: the results have no numeric axis.</p>';
  if (xIndex >= 0 && metrics.length) {
    // An axis spanning a factor of 16 or more (buffer sizes) is drawn on a log2 scale.
    const values = [...new Set(results.map((r) => axisValue(r.axes[xIndex])))].sort((a, b) => a - b);
    const log = values[0] > 0 && values[values.length - 1] / values[0] >= 16;
    const bytes = axes[xIndex].endsWith('_bytes');
    const label = (v) => (bytes && v >= 1024
      ? (v >= 2 ** 30 ? `${+(v / 2 ** 30).toPrecision(3)} GiB` : v >= 2 ** 20 ? `${+(v / 2 ** 20).toPrecision(3)} MiB` : `${+(v / 1024).toPrecision(3)} KiB`)
      : String(v));
    const at = (v) => (log ? Math.log2(v) : v);
    const groups = new Map();
    for (const r of results) {
      const name = r.axes.filter((_, i) => i !== xIndex).map((a) => `${a.name}=${axisValue(a)}`).join(' ') || metrics[0].name;
      if (!groups.has(name)) groups.set(name, {name, points: []});
      const m = r.metrics[0];
      groups.get(name).points.push({x: at(axisValue(r.axes[xIndex])), y: m.median, lo: m.min, hi: m.max});
    }
    chart = plot({title: `${metrics[0].name} against ${axes[xIndex]} (median; bars: min-max)`,
      xLabel: `${axes[xIndex]}${log ? ' (log scale)' : ''}`, yLabel: `${metrics[0].name} (${metrics[0].unit || '-'})`,
      series: [...groups.values()], xTicks: values.map((v) => ({x: at(v), label: label(v)}))});
  }
  return {table, chart};
}

// An exactness job's page: each kernel check against the float64 reference, as `gpuprobe check`.
function renderChecks(job, checks) {
  const passed = checks.filter((c) => c.passed).length;
  const generic = (checks[0].axes || []).length > 0;
  const seed = checks[0].seed;
  const head = generic
    ? `<th class="text">kernel</th>${checks[0].axes.map((a) => `<th class="text">${esc(a.name)}</th>`).join('')}`
    : '<th class="text">variant</th><th class="text">kernel</th><th>t</th><th>union</th><th>max_rel</th><th>mean_rel</th><th>norm_rel</th><th>unwritten</th>';
  const body = checks.map((c) => `<tr class="check ${c.passed ? 'pass' : 'fail'}">` + (generic
    ? `<td class="text">${esc(c.kernel)}</td>${c.axes.map((a) => `<td class="text">${esc(axisValue(a))}</td>`).join('')}`
    : `<td class="text">${variant(c.variant)}</td><td class="text">${esc(c.kernel)}</td><td>${c.t}</td><td>${c.union_size}</td>
       <td>${Number(c.max_rel_error).toExponential(2)}</td><td>${Number(c.mean_rel_error).toExponential(2)}</td>
       <td>${Number(c.norm_rel_error).toExponential(2)}</td><td>${c.unwritten}</td>`) +
    `<td class="text">${c.passed ? 'pass' : 'FAIL'}</td><td class="text">${esc(c.detail || '')}</td></tr>`).join('');
  document.getElementById('view').innerHTML = `<section><h2>Job ${esc(job.id)} · ${esc(job.probe)} check · <span class="state-${state(job.state)}">${state(job.state)}</span></h2>
      <div class="muted">${labels(job)} · submitted ${when(job.created_at)} by ${esc(job.submitter)} ·
      ${esc(job.device)}${job.error_message ? ' · ' + esc(job.error_message) : ''}</div>
      <div id="check-summary">${passed} of ${checks.length} kernel checks passed${seed && seed !== '0' ? ` · seed ${esc(seed)}` : ''}
      · outputs poisoned with NaN first, compared with the float64 reference</div></section>
    <section><h2>Checks</h2><table><tr>${head}<th class="text">result</th><th class="text">detail</th></tr>${body}</table></section>`;
  return !TERMINAL.includes(job.state);
}

async function renderJob(id) {
  const view = document.getElementById('view');
  const [job, results] = await Promise.all([api(`/api/v1/jobs/${id}`), api(`/api/v1/jobs/${id}/rows`)]);
  if (job.probe === 'moe-union' && !job.check) return renderSweep(job, (results.results || []).map(moeArm));
  if ((results.results || []).length) {
    const {table, chart} = genericResults(results.results);
    view.innerHTML = `<section><h2>Job ${esc(job.id)} · ${esc(job.probe)} · <span class="state-${state(job.state)}">${state(job.state)}</span></h2>
        <div class="muted">${labels(job)} · submitted ${when(job.created_at)} by ${esc(job.submitter)} ·
        ${esc(job.device)} · attempts ${job.attempts || 0}${job.error_message ? ' · ' + esc(job.error_message) : ''}</div>
        ${job.telemetry ? `<div class="muted" id="telemetry">telemetry: ${telemetry(job.telemetry)}</div>` : ''}</section>
      <section class="plots"><div id="plot-results">${chart}</div></section>
      <section><h2>Results</h2>${table}</section>`;
    return !TERMINAL.includes(job.state);
  }
  if ((results.checks || []).length) return renderChecks(job, results.checks);
  return renderSweep(job, []);
}

// Two jobs arm by arm (GET /api/v1/compare): both section medians, the ratio with its 95%
// interval and the verdict. BASE may be a job id or label:KEY=VALUE.
async function renderCompare(base, cand) {
  const view = document.getElementById('view');
  const c = await api(`/api/v1/compare?base=${encodeURIComponent(base)}&candidate=${encodeURIComponent(cand)}`);
  const arms = c.arms || [];
  const head = arms.length ? arms[0].axes.map((a) => `<th class="text">${esc(a.name)}</th>`).join('') +
    `<th>base ${esc(arms[0].quantity)}</th><th>candidate ${esc(arms[0].quantity)}</th>` : '';
  const cells = (a) => a.axes.map((x) => `<td class="text">${esc(axisValue(x))}</td>`).join('') +
    `<td>${fixed(a.base_section_us, 3)}</td><td>${fixed(a.candidate_section_us, 3)}</td>`;
  const jobLink = (id) => `<a href="#/jobs/${esc(id)}">${esc(id)}</a>`;
  const history = c.history_job_ids || [];
  const baseline = history.length ? `${history.length} baseline jobs (${history.map(jobLink).join(', ')})`
    : jobLink(c.base_job_id);
  view.innerHTML = `<section><h2>Compare ${baseline} → ${jobLink(c.candidate_job_id)}</h2>
      <div class="muted" id="compare-summary">${c.faster || 0} faster · ${c.slower || 0} slower · ${c.same || 0} same ·
      ${c.unsure || 0} unsure · ${c.too_few_reps || 0} too few reps (threshold ${fixed(100 * c.threshold, 1)}%,
      ${fixed(100 * c.confidence, 0)}% intervals, ${esc(c.method || '')})</div>
      ${c.note ? `<div class="muted" id="compare-note">note: ${esc(c.note)}</div>` : ''}</section>
    <section><table><tr>${head}<th>ratio</th><th class="text">95%</th><th class="text">verdict</th></tr>` +
    arms.map((a) => `<tr class="arm verdict-${verdict(a.verdict).replace(/ /g, '-')}">${cells(a)}<td>${fixed(a.ratio, 4)}</td>
      <td class="text">[${fixed(a.ratio_low, 4)}, ${fixed(a.ratio_high, 4)}]</td>
      <td class="text">${verdict(a.verdict)}</td></tr>`).join('') + '</table></section>' +
    `<section class="plots"><div id="plot-compare">${ratioPlot(c)}</div></section>`;
  return false;
}

// Each arm's ratio with its 95% interval, against the band 1 +- threshold where it is `same`.
function ratioPlot(c) {
  const arms = c.arms || [];
  if (!arms.length) return '';
  const name = (a) => a.axes.map((x) => (x.int_value !== undefined ? `${x.name}=${axisValue(x)}` : x.text_value)).join(' ');
  const points = arms.map((a, i) => ({x: i + 1, y: a.ratio, job: name(a),
    ...(a.ratio_high > 0 ? {lo: a.ratio_low, hi: a.ratio_high} : {})}));
  const t = c.threshold || 0;
  return plot({title: 'candidate / base, 95% intervals; shaded: within the threshold (same)',
    xLabel: 'arm', yLabel: 'ratio (above 1: slower)', zeroBased: false,
    xTicks: arms.map((a, i) => ({x: i + 1, label: name(a)})),
    series: [{name: `same: 1 ± ${fixed(100 * t, 1)}%`, color: '#16a34a', band: {lo: 1 - t, hi: 1 + t},
              line: false, markers: false, points: [{x: 0.5, y: 1}, {x: arms.length + 0.5, y: 1}]},
             {name: 'ratio', line: false, points}]});
}

// Trends: one arm's metric (its median, with its 95% interval) across the newest succeeded jobs
// that carry label KEY (one series per value of KEY, against time), and the baseline: the band
// of the newest jobs with KEY=BASE, as compare's history interval (a line at the newest such
// job while there are fewer than 3). Every probe: a moe-union arm is `reference` (the default) or
// variant,t,union, its metric gu (the default) or down; another probe's arm is its axes as
// name=value joined by commas (empty: its first result), its metric one of the probe's metrics
// (empty: the first). Only jobs of the newest job's probe, device and resolved spec (reps,
// blocks, seed, order and labels aside) count. Reads at most TREND_JOBS jobs' results.
const TREND_JOBS = 50;
// The baseline's band: compare's history interval over the newest HISTORY baseline jobs (its
// default), Student's t at 97.5% by degrees of freedom (df = jobs - 1, at least 3 jobs).
const HISTORY = 8;
const T975 = [NaN, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365];

// The prediction interval of one more job like `values` (log-normal between jobs), or null.
function historyBand(values) {
  const n = values.length;
  if (n < 3) return null;
  const logs = values.map(Math.log);
  const mean = logs.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(logs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  const half = T975[n - 1] * sd * Math.sqrt(1 + 1 / n);
  return {mid: Math.exp(mean), lo: Math.exp(mean - half), hi: Math.exp(mean + half)};
}

function trendParams() {
  const q = new URLSearchParams(location.hash.split('?')[1] || '');
  return {key: q.get('key') || 'branch', base: q.get('base') || 'main', arm: q.get('arm') || '',
          metric: q.get('metric') || '', spec: Number(q.get('spec') || 0)};
}

const labelsOf = (job) => {
  const r = job.request || {};
  return (r.sweep || r.check || r.probe || {}).labels || {};
};

// The job's resolved spec as trends compare it (what may differ between comparable jobs left
// out), and in words: "experts=32 hidden=256 ... timing=events".
function specKey(job) {
  const {reps, blocks, seed, order, labels, ...rest} = job.resolved || {};
  return JSON.stringify(rest);
}

function specText(job) {
  const words = [];
  const add = (k, v) => {
    if (Array.isArray(v)) {
      if (v.length) words.push(`${k}=${v.join(',')}`);
    } else if (v && typeof v === 'object') {
      for (const [k2, v2] of Object.entries(v)) add(k2, v2);
    } else if (v !== '' && v !== false && v !== null && v !== undefined) {
      words.push(`${k}=${v}`);
    }
  };
  for (const [k, v] of Object.entries(JSON.parse(specKey(job)))) if (k !== '@type') add(k, v);
  return words.join(' ');
}

// The arm's point in one job's results, or null: its value, interval, device and what it is.
function trendPoint(job, results, p) {
  if (job.probe === 'moe-union') {
    const arms = (results.results || []).map(moeArm);
    const tMax = Math.max(0, ...arms.map((a) => a.t));
    const a = arms.find((x) => armMatches(x, p.arm || 'reference', tMax));
    const m = p.metric === 'down' ? a && a.down : a && a.gu;
    return a && {y: m.median, lo: m.low, hi: m.high, device: a.device,
                 metric: p.metric === 'down' ? 'down' : 'gate+up', unit: 'us'};
  }
  const want = p.arm.split(',').filter(Boolean).map((kv) => kv.split('='));
  const result = (results.results || []).find((r) => want.every(([name, value]) =>
    r.axes.some((a) => a.name === name && String(axisValue(a)) === value)));
  const metric = result && (p.metric ? result.metrics.find((m) => m.name === p.metric) : result.metrics[0]);
  return metric && {y: metric.median, lo: metric.low, hi: metric.high, device: result.device,
                    metric: metric.name, unit: metric.unit || '-'};
}

async function renderTrends() {
  const view = document.getElementById('view');
  const p = trendParams();
  const listed = await api(`/api/v1/jobs?state=succeeded&page_size=${TREND_JOBS}`);
  const jobs = (listed.jobs || []).filter((j) => labelsOf(j)[p.key] !== undefined);
  const withResults = await Promise.all(jobs.map(async (j) => ({job: j, results: await api(`/api/v1/jobs/${j.id}/rows`)})));
  const points = [];
  for (const {job, results} of withResults) {
    const point = trendPoint(job, results, p);
    if (point) points.push({job, ...point, value: labelsOf(job)[p.key], when: new Date(job.created_at)});
  }
  points.sort((a, b) => a.when - b.when);
  // Jobs compare only within one probe, spec and device: the groups, the newest's first; the
  // user picks one (default: the newest job's).
  const groupKey = (pt) => JSON.stringify([pt.device, pt.job.probe || '', specKey(pt.job)]);
  const groups = [];
  for (const pt of [...points].reverse()) {
    let g = groups.find((x) => x.key === groupKey(pt));
    if (!g) groups.push(g = {key: groupKey(pt), newest: pt, count: 0});
    g.count++;
  }
  const chosen = groups[Math.min(p.spec, groups.length - 1)];
  const newest = chosen && chosen.newest;
  const kept = points.filter((pt) => chosen && groupKey(pt) === chosen.key);
  const specChoice = groups.length ? `spec <select name="spec">${groups.map((g, i) =>
    `<option value="${i}"${g === chosen ? ' selected' : ''}>${esc(g.newest.job.probe)}: ${esc(specText(g.newest.job))} on ${esc(g.newest.device)} (${g.count} jobs)</option>`).join('')}</select>` : '';
  // x: hours since the first kept job was created; ticks: its commit label, else its id.
  const t0 = kept.length ? kept[0].when : 0;
  const hours = (pt) => (pt.when - t0) / 3.6e6;
  const series = new Map();
  for (const pt of kept) {
    if (!series.has(pt.value)) series.set(pt.value, {name: `${p.key}=${pt.value}`, points: []});
    series.get(pt.value).points.push({x: hours(pt), y: pt.y, lo: pt.lo, hi: pt.hi, job: pt.job.id});
  }
  const history = kept.filter((pt) => pt.value === p.base).slice(-HISTORY);
  const baseline = history[history.length - 1];
  const band = historyBand(history.map((pt) => pt.y));
  const span = [0, (kept.length && hours(kept[kept.length - 1])) || 1e-3];
  // The baseline first, without markers, so that no job's point is drawn behind it: its band
  // from history (3 or more jobs), else the newest baseline job's value.
  const all = [...(band ? [{name: `${p.base} band (${history.length})`, color: '#111',
    band, points: [{x: span[0], y: band.mid}, {x: span[1], y: band.mid}], dashed: true, markers: false}]
    : baseline ? [{name: `baseline ${p.base}`, dashed: true, color: '#111', markers: false,
      points: [{x: span[0], y: baseline.y}, {x: span[1], y: baseline.y}]}] : []), ...series.values()];
  // Tick labels at least a tenth of the axis apart, the first job's always (each point's
  // tooltip names its job).
  const xTicks = [];
  for (const pt of kept) {
    const x = hours(pt);
    if (xTicks.length && x - xTicks[xTicks.length - 1].x < (span[1] - span[0]) / 10) continue;
    xTicks.push({x, label: labelsOf(pt.job).commit ? labelsOf(pt.job).commit.slice(0, 8) : pt.job.id});
  }
  const arm = p.arm || (newest && newest.job.probe !== 'moe-union' ? 'the first result' : 'the reference row');
  view.innerHTML = `<section><h2>Trends</h2><form id="trend-form">
      label key <input name="key" value="${esc(p.key)}" size="10"> baseline value <input name="base" value="${esc(p.base)}" size="10">
      arm <input name="arm" value="${esc(p.arm)}" size="24" title="moe-union: reference, or variant,t,union e.g. per-slot,6,60; another probe: its axes, e.g. size_bytes=1073741824,cache=warm">
      metric <input name="metric" value="${esc(p.metric)}" size="10" title="moe-union: gu or down; another probe: one of its metrics (empty: the first)">
      ${specChoice} <button>show</button></form>
      <div class="muted" id="trend-summary">${kept.length} jobs with label ${esc(p.key)} (of the newest ${TREND_JOBS} succeeded),
      ${newest ? `<span id="trend-spec">${esc(newest.job.probe)}: ${esc(specText(newest.job))} on ${esc(newest.device)}</span> (the spec of ${esc(newest.job.id)}${groups.length > 1 ? `; ${groups.length - 1} other spec${groups.length > 2 ? 's' : ''} among the labelled jobs: choose above` : ''})` : 'none match'}${baseline ? ` · baseline: ${band ? `the band of the newest ${history.length} jobs with ${esc(p.key)}=${esc(p.base)} (compare's history interval), newest ${esc(baseline.job.id)}` : `${esc(baseline.job.id)}, the newest with ${esc(p.key)}=${esc(p.base)} (3 or more give a band)`}` : ` · no job with ${esc(p.key)}=${esc(p.base)} for a baseline`}.
      Click a legend entry to hide or show its series.</div></section>
    <section class="plots"><div id="plot-trend">${newest ? plot({title: `${newest.metric} median of ${arm}, 95% intervals, per job over time`, zeroBased: false,
      xLabel: 'hours since the first job (labels: commit, else job id)', yLabel: `${newest.metric} (${newest.unit})`, series: all, xTicks})
      : '<p class="muted">no matching jobs</p>'}</div></section>`;
  document.getElementById('trend-form').addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = '#/trends?' + new URLSearchParams(new FormData(e.target)).toString();
  });
  for (const entry of view.querySelectorAll('.legend')) {
    entry.addEventListener('click', () => {
      for (const el of view.querySelectorAll(`[data-series="${CSS.escape(entry.dataset.series)}"]`)) {
        el.classList.toggle('hidden');
      }
    });
  }
  return false;
}

function compareForm() {
  return `<section><h2>Compare two jobs</h2><form id="compare-form">
      <input name="base" placeholder="base: job id or label:branch=main" required>
      <input name="cand" placeholder="candidate job id" required> <button>compare</button></form></section>`;
}

async function route() {
  clearTimeout(timer);
  const match = location.hash.match(/^#\/jobs\/([^/]+)$/);
  const compare = location.hash.match(/^#\/compare\/([^/]+)\/([^/]+)$/);
  const trends = /^#\/trends(\?|$)/.test(location.hash);
  const home = ['', '#', '#/'].includes(location.hash);
  try {
    await renderDevices();
    if (!trends && !compare && !match && !home) {
      document.getElementById('view').innerHTML = `<section id="not-found"><h2>No such page</h2>
        <p>${esc(location.hash)} is not a page of this dashboard: <a href="#/">jobs</a>, #/jobs/JOB,
        #/compare/BASE/CAND or <a href="#/trends">trends</a>.</p></section>`;
      return;
    }
    const again = trends ? await renderTrends() : compare ? await renderCompare(decodeURIComponent(compare[1]), decodeURIComponent(compare[2]))
      : match ? await renderJob(match[1]) : await renderHome();
    if (again) timer = setTimeout(route, 2000);
  } catch (e) {
    document.getElementById('view').innerHTML = `<section><h2>Cannot load</h2><p>${esc(e.message)}</p>
      <p class="muted">With tokens, open this page as /?token=TOKEN.</p></section>`;
  }
}

window.addEventListener('hashchange', route);
route();
