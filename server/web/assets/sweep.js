// The dashboard's moe-union sweep page (loaded before app.js, whose helpers it calls): a sweep's
// arms read from their results by moe-union's names, as the seed's table (with a column chooser),
// the section against union per t, and the achieved share of the calibrated read; and the arm a
// trend follows.

// A moe-union arm, read from its result by the names moe-union gives them: axes variant, t,
// slots and union; metrics gu_us and down_us; derived values by name (undefined where absent).
function moeArm(r) {
  const axis = (name) => axisValue(r.axes.find((a) => a.name === name) || {});
  const metric = (name) => r.metrics.find((m) => m.name === name) || {};
  const derived = (name) => ((r.derived || []).find((d) => d.name === name) || {}).value;
  return {variant: axis('variant'), t: axis('t'), slots: axis('slots'), union: axis('union'),
          gu: metric('gu_us'), down: metric('down_us'), derived, verdict: r.verdict,
          disturbance: r.disturbance, device: r.device};
}

// Groups a sweep's arms into series: one per t, and per variant when a job has several.
function seriesOf(arms, y, opts = {}) {
  const several = new Set(arms.map((a) => a.variant)).size > 1;
  const groups = new Map();
  for (const a of arms) {
    const name = `t=${a.t}${several ? ' ' + variant(a.variant) : ''}${opts.suffix || ''}`;
    if (!groups.has(name)) groups.set(name, {name, dashed: opts.dashed, points: []});
    groups.get(name).points.push({x: a.union, ...y(a)});
  }
  return [...groups.values()];
}

function isReference(a, tMax) {
  return variant(a.variant) === 'per-slot' && a.t === tMax && a.union === a.slots;
}

// A sweep's table columns (the seed's, then moe-union's own), each cell read from a moeArm;
// the unticked ones are hidden until the user ticks them (kept in localStorage), so that the
// default table fits a laptop's width with its verdict in view.
const percent = (v) => (v ? fixed(v, 1) + '%' : '-');
const ROW_COLUMNS = [
  {key: 'variant', head: () => 'variant', text: true, cell: (a) => variant(a.variant)},
  {key: 't', head: () => 't', cell: (a) => a.t},
  {key: 'slots', head: () => 'slots', cell: (a) => a.slots},
  {key: 'union', head: () => 'union', cell: (a) => a.union},
  {key: 'gu_us', head: () => 'gu_us', cell: (a) => fixed(a.gu.median, 1)},
  {key: 'down_us', head: () => 'down_us', cell: (a) => fixed(a.down.median, 1)},
  {key: 'section_us', head: () => 'section_us', cell: (a) => fixed(a.derived('section_us'), 1)},
  {key: 'gu_spread', head: () => 'gu_spread', cell: (a) => fixed(a.gu.spread, 4)},
  {key: 'dn_spread', head: () => 'dn_spread', cell: (a) => fixed(a.down.spread, 4)},
  {
    key: 'gu_bw_vs_union',
    head: () => 'gu_BW_vs_union',
    off: true,
    cell: (a) => fixed(a.derived('gu_bw_vs_union_tbps'), 3)
  },
  {
    key: 'gu_bw_vs_slots',
    head: () => 'gu_BW_vs_slots',
    off: true,
    cell: (a) => fixed(a.derived('gu_bw_vs_slots_tbps'), 3)
  },
  {
    key: 'vs_full',
    head: (tMax) => `vs_t${tMax}_full`,
    cell: (a) => (a.derived('vs_reference') === undefined ? '-' : fixed(a.derived('vs_reference'), 4) + 'x')
  },
  {key: 'gu_pct', head: () => 'gu %bw', off: true, cell: (a) => percent(a.derived('gu_pct_of_read'))},
  {key: 'dn_pct', head: () => 'dn %bw', off: true, cell: (a) => percent(a.derived('down_pct_of_read'))},
  {
    key: 'vs_ref',
    head: () => 'vs_ref 95%',
    text: true,
    cell: (a) =>
        (a.derived('vs_reference_low') === undefined ?
             '-' :
             `[${fixed(a.derived('vs_reference_low'), 4)}, ${fixed(a.derived('vs_reference_high'), 4)}]`)
  },
  {
    key: 'verdict',
    head: () => 'verdict',
    text: true,
    cell: (a) => `${verdict(a.verdict)}${
        a.disturbance ? ` <span class="disturbed" title="${esc(a.disturbance)}">disturbed</span>` :
                        ''}`
  },
];

function visibleColumns() {
  const saved = localStorage.getItem('gpuprobe.columns');
  return new Set(saved ? JSON.parse(saved) : ROW_COLUMNS.filter((c) => !c.off).map((c) => c.key));
}

function columnChooser() {
  const visible = visibleColumns();
  return `<details id="columns"><summary class="muted">columns (${visible.size} of ${ROW_COLUMNS.length} shown)</summary>` +
    ROW_COLUMNS.map((c) => `<label><input type="checkbox" data-column="${c.key}"${visible.has(c.key) ? ' checked' : ''}> ${esc(c.head('T'))}</label>`).join(' ') +
    '</details>';
}

// Ticking a column shows it on every job's page from then on.
document.addEventListener('change', (e) => {
  if (!e.target.dataset || !e.target.dataset.column) return;
  const visible = visibleColumns();
  if (e.target.checked) visible.add(e.target.dataset.column); else visible.delete(e.target.dataset.column);
  localStorage.setItem('gpuprobe.columns', JSON.stringify([...visible]));
  route();
});

// A moe-union sweep's page: its arms as the seed's table, the section against union per t, and
// the achieved share of the calibrated read.
function renderSweep(job, arms) {
  const view = document.getElementById('view');
  const tMax = Math.max(0, ...arms.map((a) => a.t));
  const shown = ROW_COLUMNS.filter((c) => visibleColumns().has(c.key));
  const table = arms.length ? `${columnChooser()}<table><tr>${shown.map((c) =>
      `<th${c.text ? ' class="text"' : ''}>${c.head(tMax)}</th>`).join('')}</tr>` +
    arms.map((a) => `<tr class="row${isReference(a, tMax) ? ' reference' : ''}">${shown.map((c) =>
      `<td${c.text ? ' class="text"' : ''}>${c.cell(a)}</td>`).join('')}</tr>`).join('') + '</table>'
    : '<p class="muted">no rows yet</p>';
  const sections = seriesOf(arms, (a) => ({
    y: a.derived('section_us'), lo: a.gu.min + a.down.min, hi: a.gu.max + a.down.max, ref: isReference(a, tMax),
  }));
  const calibrated = arms.some((a) => a.derived('gu_pct_of_read') > 0);
  const bandwidth = calibrated
    ? [...seriesOf(arms, (a) => ({y: a.derived('gu_pct_of_read')}), {suffix: ' gate+up'}),
       ...seriesOf(arms, (a) => ({y: a.derived('down_pct_of_read')}), {suffix: ' down', dashed: true})]
    : [];
  view.innerHTML = `<section><h2>Job ${esc(job.id)} · <span class="state-${state(job.state)}">${state(job.state)}</span></h2>
      <div class="muted">${labels(job)} · submitted ${when(job.created_at)} by ${esc(job.submitter)} ·
      ${esc(job.device)} · ${esc((job.resolved || {}).timing)}, ${esc((job.resolved || {}).cache)} ·
      attempts ${job.attempts || 0}${job.error_message ? ' · ' + esc(job.error_message) : ''}</div>
      ${job.telemetry ? `<div class="muted" id="telemetry">telemetry: ${telemetry(job.telemetry)}</div>` : ''}</section>
    <section class="plots"><div id="plot-section">${plot({title: 'Section time against union (median; bars: min-max; circled: reference row)',
      xLabel: 'union (distinct experts)', yLabel: 'section (us)', series: sections})}</div>
      <div id="plot-bandwidth">${calibrated ? plot({title: 'Achieved bandwidth, % of the calibrated streaming read',
      xLabel: 'union (distinct experts)', yLabel: '% of read bandwidth', series: bandwidth})
      : '<p class="muted">No bandwidth plot: this backend has no calibrated read bandwidth (cpu).</p>'}</div></section>
    <section><h2>Rows</h2>${table}</section>`;
  return !TERMINAL.includes(job.state);
}

function armMatches(a, arm, tMax) {
  if (arm === 'reference') return isReference(a, tMax);
  const [v, t, u] = arm.split(',');
  return variant(a.variant) === v && a.t === Number(t) && a.union === Number(u);
}
