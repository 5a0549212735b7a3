// WCAG contrast: the site's accent colour (a setting) adjusted until text drawn with it, or
// white text drawn on it, reads at AA (4.5:1) on the theme's background.

type Rgb = [number, number, number];

export function parseColor(hex: string): Rgb | undefined {
  const m = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(hex.trim());
  if (!m) return undefined;
  const h = m[1]!.length === 3 ? [...m[1]!].map((c) => c + c).join('') : m[1]!;
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as Rgb;
}

const channel = (c: number) => {
  const s = c / 255;
  return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
};
const luminance = ([r, g, b]: Rgb) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);

export function contrast(a: Rgb, b: Rgb): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

const mix = (a: Rgb, b: Rgb, t: number): Rgb => a.map((v, i) => Math.round(v + (b[i]! - v) * t)) as Rgb;
const hex = (c: Rgb) => `#${c.map((v) => v.toString(16).padStart(2, '0')).join('')}`;

/** `color` moved toward black (or white, `lighten`) in small steps until it reaches `min` against `bg`. */
export function readable(color: string, bg: string, lighten = false, min = 4.5): string {
  const c = parseColor(color);
  const b = parseColor(bg);
  if (!c || !b) return color;
  const target: Rgb = lighten ? [255, 255, 255] : [0, 0, 0];
  for (let t = 0; t <= 1; t += 0.02) {
    const m = mix(c, target, t);
    if (contrast(m, b) >= min) return hex(m);
  }
  return hex(target);
}
