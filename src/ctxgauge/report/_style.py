"""The HTML report's one stylesheet, inlined into the page (no font files: the system UI font stack)."""

CSS = """
:root { --ink:#1f2430; --muted:#5d6470; --line:#e3e6eb; --bg:#f6f7f9; --card:#ffffff; --accent:#3b6fb6; }
* { box-sizing: border-box; }
html { background: var(--bg); }
body { margin: 0; color: var(--ink); font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto,
  "Noto Sans", "DejaVu Sans", Helvetica, Arial, sans-serif; }
header.top { background: #1f2a3c; color: #fff; padding: 22px 0 18px; }
header.top h1 { margin: 0 0 4px; font-size: 24px; font-weight: 650; letter-spacing: -0.01em; }
header.top p { margin: 0; color: #c8d0dc; }
header.top nav { margin-top: 12px; display: flex; flex-wrap: wrap; gap: 8px; }
header.top nav a { color: #fff; background: rgba(255,255,255,0.12); padding: 3px 10px; border-radius: 12px;
  text-decoration: none; font-size: 13px; }
header.top nav a:hover { background: rgba(255,255,255,0.25); }
.wrap { max-width: 1360px; margin: 0 auto; padding: 0 24px; }
main.wrap { padding-bottom: 48px; }
section.suite { margin-top: 30px; }
section.suite > h2 { font-size: 20px; margin: 0 0 6px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
ul.notes { margin: 6px 0 12px; padding-left: 20px; color: var(--muted); font-size: 13px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 18px 12px;
  margin: 14px 0; box-shadow: 0 1px 2px rgba(20,30,50,0.04); }
.card h3 { margin: 0 0 10px; font-size: 15.5px; font-weight: 620; }
.card .caption { color: var(--muted); font-size: 12.5px; margin: 8px 0 0; }
.card .source { color: var(--muted); font-size: 12px; margin-top: 6px; }
.card .source a { color: var(--accent); }
.panels { display: flex; flex-wrap: wrap; gap: 10px 26px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; width: auto; min-width: 60%; }
td:first-child { white-space: nowrap; }
th, td { padding: 5px 9px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: middle; }
th { font-weight: 600; color: var(--muted); font-size: 12px; text-transform: none; background: #fafbfc; }
tbody tr:hover { background: #f9fafc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td a, .legend a { color: var(--accent); text-decoration: none; }
td a:hover { text-decoration: underline; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600;
  white-space: nowrap; }
.b-good { background: #dcefe1; color: #1d6a34; } .b-warn { background: #fbecc8; color: #7a5400; }
.b-bad { background: #f8d9d6; color: #9b2a22; } .b-muted { background: #eceef1; color: #5d6470; }
.b-ctl4 { background: #1d6a34; color: #fff; } .b-ctl3 { background: #3f9c5a; color: #fff; }
.b-ctl2 { background: #8cc084; color: #13361c; } .b-ctl1 { background: #f0b54a; color: #4a3100; }
.b-ctl0 { background: #c9504c; color: #fff; }
svg text { font-family: inherit; fill: var(--ink); }
svg .panel-title { font-size: 13px; font-weight: 600; }
svg .label { font-size: 12px; } svg .value { font-size: 12px; font-variant-numeric: tabular-nums; }
svg .tick { font-size: 10.5px; fill: var(--muted); } svg .na { font-size: 12px; fill: var(--muted); font-style: italic; }
svg .grid { stroke: #e6e8ec; stroke-width: 1; } svg .zero { stroke: #9aa1ab; stroke-dasharray: 3 3; }
svg .whisker { stroke: #1f2430; stroke-width: 1.4; fill: none; }
svg .count { font-size: 11px; font-weight: 600; }
svg a:hover .bar, svg a:hover text { opacity: 0.8; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 12px; color: var(--muted); margin-top: 6px; }
.legend .key i { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px;
  vertical-align: -1px; border: 1px solid rgba(0,0,0,0.12); }
.nowrap { white-space: nowrap; } .tick { color: var(--muted); font-size: 11.5px; }
footer { color: var(--muted); font-size: 12px; margin-top: 30px; }
"""
