// "Open in" links for players installed on the visitor's device, the list OpenList offers.
// $url is the raw link as is, $eurl the same percent-encoded, $name the file name encoded.
const PLAYERS: Array<[name: string, scheme: string]> = [
  ['IINA', 'iina://weblink?url=$eurl'],
  ['PotPlayer', 'potplayer://$url'],
  ['VLC', 'vlc://$url'],
  ['mpv', 'mpv://$eurl'],
  ['nPlayer', 'nplayer-$url'],
  ['Infuse', 'infuse://x-callback-url/play?url=$eurl'],
  ['OmniPlayer', 'omniplayer://weblink?url=$url'],
  ['Fig Player', 'figplayer://weblink?url=$url'],
  ['Fileball', 'filebox://play?url=$url'],
  ['SenPlayer', 'senplayer://x-callback-url/play?url=$eurl'],
  ['MX Player', 'intent:$url#Intent;package=com.mxtech.videoplayer.ad;S.title=$name;end'],
  ['MX Player Pro', 'intent:$url#Intent;package=com.mxtech.videoplayer.pro;S.title=$name;end'],
  ['Android', 'intent:$url#Intent;type=video/*;S.title=$name;end'],
];

export function externalPlayers(url: string, name: string): Array<{ name: string; href: string }> {
  const abs = new URL(url, location.href).href;
  return PLAYERS.map(([player, scheme]) => ({
    name: player,
    href: scheme.replace('$eurl', encodeURIComponent(abs)).replace('$url', abs).replace('$name', encodeURIComponent(name)),
  }));
}
