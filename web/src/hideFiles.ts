// The hide_files setting of the original UI: one JavaScript regular expression per line
// (`/\/README.md/i`), matched against each entry's full path; matches are left out of listings
// (the server's path rules hide for real; this only tidies the view, e.g. a rendered README.md).
export function hideFilesMatcher(setting: string | undefined): (fullPath: string) => boolean {
  const res: RegExp[] = [];
  for (const line of (setting ?? '').split('\n')) {
    const m = /^\/(.*)\/([a-z]*)$/.exec(line.trim());
    if (!m) continue;
    try {
      res.push(new RegExp(m[1]!, m[2]));
    } catch {
      /* an invalid line hides nothing */
    }
  }
  return (p) => res.some((re) => re.test(p));
}
