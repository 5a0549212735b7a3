import { ADDITIONAL as ALIST_ITEMS, AlistV3Driver } from '../alist-v3/index.js';
import { type DriverFactory, driverConfig, type FormItem, item, type LinkArgs, readAddition } from '../types.js';

// OpenList's items, in its order (drivers/openlist/meta.go): AList V3's plus three switches.
const ADDITIONAL: FormItem[] = [
  ...ALIST_ITEMS,
  item('pass_ip_to_upsteam', 'bool', { default: 'true' }),
  item('pass_ua_to_upsteam', 'bool', { default: 'true' }),
  item('forward_archive_requests', 'bool', { default: 'true' }),
];

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/**
 * OpenList's "OpenList" driver, the AList V3 driver's successor: the same calls of another
 * server of this API, and when a link is asked for, the client's address and user agent passed
 * on (X-Forwarded-For / X-Real-Ip, User-Agent), so a peer that signs links per client or
 * redirects to a cloud that checks them gives a link that works for that client.
 */
export class OpenListDriver extends AlistV3Driver {
  constructor(
    private readonly flags: Record<string, unknown>,
    ctx: ConstructorParameters<typeof AlistV3Driver>[1],
  ) {
    super(flags, ctx);
  }

  protected override clientHeaders(args: LinkArgs): Record<string, string> {
    const h: Record<string, string> = {};
    if (this.flags.pass_ip_to_upsteam && args.ip) {
      h['x-forwarded-for'] = args.ip;
      h['x-real-ip'] = args.ip;
    }
    const ua = first(args.header?.['user-agent']);
    if (this.flags.pass_ua_to_upsteam && ua) h['user-agent'] = ua;
    return h;
  }
}

export const openListDriver: DriverFactory = {
  config: driverConfig({ name: 'OpenList', localSort: true, checkStatus: true, proxyRangeOption: true, defaultRoot: '/' }),
  additional: ADDITIONAL,
  create: (addition, ctx) => new OpenListDriver(readAddition(ADDITIONAL, addition), ctx),
};
