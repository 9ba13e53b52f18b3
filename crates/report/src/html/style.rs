//! The page's only stylesheet, inlined so the file renders with no network access.
//!
//! Colours avoid the exact values of [`crate::svg::palette`] so that the screenshot test can
//! attribute pixels of a series colour to the charts.

/// CSS for the report page.
pub const CSS: &str = r#"
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f1f5f9;color:#334155;font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans','Liberation Sans',Arial,sans-serif}
main{max-width:1120px;margin:0 auto;padding:0 24px 40px}
header.page{background:#172554;color:#f8fafc;padding:22px 0 20px;margin-bottom:24px}
header.page .inner{max-width:1120px;margin:0 auto;padding:0 24px;display:flex;align-items:baseline;gap:18px;flex-wrap:wrap}
header.page h1{margin:0;font-size:22px;font-weight:650;letter-spacing:-0.01em}
header.page h1 .brand{color:#93c5fd}
header.page .sub{color:#cbd5e1;font-size:14px}
h2{font-size:19px;color:#1e293b;margin:0 0 14px;font-weight:650}
h2 .label{color:#475569;font-weight:500}
h3{font-size:15px;color:#1e293b;margin:22px 0 10px;font-weight:650}
h3 .figures{font-weight:500;color:#475569;font-size:13.5px;margin-left:8px}
section.card{background:#fff;border:1px solid #e2e8f0;border-radius:10px;padding:20px 22px;margin:0 0 22px;box-shadow:0 1px 2px rgba(15,23,42,.04)}
dl.meta{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:10px 22px;margin:0 0 18px}
dl.meta div{min-width:0}
dl.meta dt{font-size:11.5px;text-transform:uppercase;letter-spacing:.05em;color:#64748b;margin:0}
dl.meta dd{margin:2px 0 0;color:#1e293b;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:7px 10px;border-bottom:1px solid #e2e8f0;text-align:left;vertical-align:top}
th{font-size:11.5px;text-transform:uppercase;letter-spacing:.04em;color:#64748b;font-weight:600;background:#f8fafc}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.phase{font-weight:600;color:#1e293b}
td.error{color:#991b1b}
tr:last-child td{border-bottom:none}
.table-wrap{overflow-x:auto;border:1px solid #e2e8f0;border-radius:8px}
.delta{display:block;font-size:12px}
.delta.up{color:#15803d}.delta.down{color:#b91c1c}.delta.same{color:#64748b}
.muted{color:#64748b}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:14px}
.charts figure{margin:0;border:1px solid #e2e8f0;border-radius:8px;overflow:hidden;background:#fff}
.charts figure.wide{grid-column:1 / -1}
.charts svg{display:block;width:100%;height:auto}
ul.notes{list-style:none;margin:0;padding:0}
ul.notes>li{border:1px solid #e2e8f0;border-left-width:4px;border-radius:8px;padding:8px 14px;margin:0 0 8px;background:#fff}
ul.notes>li.crit{border-left-color:#dc2626}ul.notes>li.warn{border-left-color:#d97706}
ul.notes>li.info{border-left-color:#0284c7}ul.notes>li.ok{border-left-color:#16a34a}
ul.notes>li.neutral{border-left-color:#94a3b8}
.note-head{display:flex;gap:10px;align-items:baseline;flex-wrap:wrap}
.note-head .title{font-weight:600;color:#1e293b}
.note-head code{font-size:12.5px;color:#475569}
.badge{display:inline-block;font-size:11px;font-weight:700;text-transform:uppercase;letter-spacing:.05em;padding:1px 8px;border-radius:999px}
.badge.crit{background:#fee2e2;color:#991b1b}.badge.warn{background:#fef3c7;color:#92400e}
.badge.info{background:#e0f2fe;color:#075985}.badge.ok{background:#dcfce7;color:#166534}
.badge.neutral{background:#f1f5f9;color:#334155}
.note-text{margin:3px 0 0;color:#334155}
.details{margin:3px 0 0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;color:#475569}
.details b{font-weight:600;color:#334155}
.evidence{margin:6px 0 0 18px;padding:0;font-size:13px}
.fix-label{margin:10px 0 4px;font-size:11.5px;text-transform:uppercase;letter-spacing:.05em;color:#64748b}
pre{margin:0;background:#1e293b;color:#e2e8f0;padding:10px 12px;border-radius:6px;font:12.5px/1.45 ui-monospace,'DejaVu Sans Mono','Liberation Mono',Menlo,monospace;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
.drops-link{color:#92400e;font-size:12.5px;margin-top:6px}
footer{color:#64748b;font-size:12px;text-align:center;margin-top:8px}
@media (max-width:760px){.charts{grid-template-columns:1fr}}
@media print{body{background:#fff}section.card{box-shadow:none;break-inside:avoid}header.page{print-color-adjust:exact;-webkit-print-color-adjust:exact}}
"#;
