/** One group of bars, e.g. the p70/p90/p98 of a duration. */
export interface BarGroup {
  label: string;
  bars: { label: string; value: number | null }[];
}

const COLOURS = ['#5b8def', '#f0a030', '#d9534f', '#4caf50'];

/**
 * A small SVG bar chart (no chart library: a few bars, fully labelled). Values are also given as
 * text in each bar's <title> and in the legend-less table summary readers get via `aria-label`.
 */
export function BarChart({
  title,
  groups,
  unit,
  format = (v) => String(v),
}: {
  title: string;
  groups: BarGroup[];
  unit?: string;
  format?(value: number): string;
}) {
  const width = 480;
  const height = 150;
  const top = 18;
  const bottom = 30;
  const max = Math.max(1, ...groups.flatMap((g) => g.bars.map((b) => b.value ?? 0)));
  const groupWidth = width / Math.max(1, groups.length);
  const barWidth = Math.min(28, (groupWidth - 16) / Math.max(1, groups[0]?.bars.length ?? 1));
  const summary = groups
    .map(
      (g) =>
        `${g.label}: ${g.bars.map((b) => `${b.label} ${b.value === null ? 'none' : format(b.value)}`).join(', ')}`,
    )
    .join('; ');
  return (
    <figure className="chart">
      <figcaption>
        {title}
        {unit ? ` (${unit})` : ''}
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${title}: ${summary}`}>
        <line x1={0} x2={width} y1={height - bottom} y2={height - bottom} className="axis" />
        {groups.map((group, gi) => {
          const x0 = gi * groupWidth + (groupWidth - barWidth * group.bars.length) / 2;
          return (
            <g key={group.label}>
              {group.bars.map((bar, bi) => {
                const h = ((bar.value ?? 0) / max) * (height - top - bottom);
                const x = x0 + bi * barWidth;
                return (
                  <g key={bar.label}>
                    <rect
                      x={x + 2}
                      y={height - bottom - h}
                      width={barWidth - 4}
                      height={h}
                      fill={COLOURS[bi % COLOURS.length]}
                    >
                      <title>{`${group.label} ${bar.label}: ${bar.value === null ? 'no samples' : format(bar.value)}`}</title>
                    </rect>
                    <text x={x + barWidth / 2} y={height - bottom - h - 4} className="value">
                      {bar.value === null ? '–' : format(bar.value)}
                    </text>
                    <text x={x + barWidth / 2} y={height - bottom + 12} className="tick">
                      {bar.label}
                    </text>
                  </g>
                );
              })}
              <text x={gi * groupWidth + groupWidth / 2} y={height - 4} className="group">
                {group.label}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
