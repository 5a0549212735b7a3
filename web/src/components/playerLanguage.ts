// ArtPlayer's own strings (settings menu, tooltips) in the page's language: its bundled Chinese,
// its French and Spanish dictionaries, and German and Japanese written here.
type Strings = Record<string, string>;

const DE: Strings = {
  'Video Info': 'Video-Informationen', Close: 'Schließen', 'Video Load Failed': 'Video konnte nicht geladen werden', Volume: 'Lautstärke',
  Play: 'Abspielen', Pause: 'Pause', Rate: 'Tempo', Mute: 'Stumm', 'Video Flip': 'Spiegeln', Horizontal: 'Horizontal', Vertical: 'Vertikal',
  Reconnect: 'Neu verbinden', 'Show Setting': 'Einstellungen zeigen', 'Hide Setting': 'Einstellungen verbergen', Screenshot: 'Bildschirmfoto',
  'Play Speed': 'Wiedergabetempo', 'Aspect Ratio': 'Seitenverhältnis', Default: 'Standard', Normal: 'Normal', Open: 'Öffnen',
  'Switch Video': 'Video wechseln', 'Switch Subtitle': 'Untertitel wechseln', Fullscreen: 'Vollbild', 'Exit Fullscreen': 'Vollbild beenden',
  'Web Fullscreen': 'Seitenfüllend', 'Exit Web Fullscreen': 'Seitenfüllend beenden', 'Mini Player': 'Miniplayer', 'PIP Mode': 'Bild im Bild',
  'Exit PIP Mode': 'Bild im Bild beenden', 'PIP Not Supported': 'Bild im Bild wird nicht unterstützt', 'Fullscreen Not Supported': 'Vollbild wird nicht unterstützt',
  'Subtitle Offset': 'Untertitel-Versatz', 'Last Seen': 'Zuletzt gesehen', 'Jump Play': 'Dort weiterspielen', AirPlay: 'AirPlay', 'AirPlay Not Available': 'AirPlay nicht verfügbar',
};
const JA: Strings = {
  'Video Info': '動画の情報', Close: '閉じる', 'Video Load Failed': '動画を読み込めませんでした', Volume: '音量', Play: '再生', Pause: '一時停止',
  Rate: '速度', Mute: 'ミュート', 'Video Flip': '反転', Horizontal: '水平', Vertical: '垂直', Reconnect: '再接続', 'Show Setting': '設定を表示',
  'Hide Setting': '設定を隠す', Screenshot: 'スクリーンショット', 'Play Speed': '再生速度', 'Aspect Ratio': 'アスペクト比', Default: 'デフォルト',
  Normal: '標準', Open: '開く', 'Switch Video': '動画を切り替え', 'Switch Subtitle': '字幕を切り替え', Fullscreen: '全画面', 'Exit Fullscreen': '全画面を終了',
  'Web Fullscreen': 'ページ全体', 'Exit Web Fullscreen': 'ページ全体を終了', 'Mini Player': 'ミニプレーヤー', 'PIP Mode': 'ピクチャーインピクチャー',
  'Exit PIP Mode': 'ピクチャーインピクチャーを終了', 'PIP Not Supported': 'ピクチャーインピクチャーに対応していません', 'Fullscreen Not Supported': '全画面に対応していません',
  'Subtitle Offset': '字幕のずれ', 'Last Seen': '前回の位置', 'Jump Play': 'そこから再生', AirPlay: 'AirPlay', 'AirPlay Not Available': 'AirPlay は使えません',
};

/** ArtPlayer's `lang` and `i18n` options for a page language code. */
export async function playerLanguage(code: string): Promise<{ lang: string; i18n?: Record<string, Strings> }> {
  switch (code) {
    case 'zh-CN':
      return { lang: 'zh-cn' };
    case 'fr':
      return { lang: 'fr', i18n: { fr: (await import('artplayer/i18n/fr')).default as Strings } };
    case 'es':
      return { lang: 'es', i18n: { es: (await import('artplayer/i18n/es')).default as Strings } };
    case 'de':
      return { lang: 'de', i18n: { de: DE } };
    case 'ja':
      return { lang: 'ja', i18n: { ja: JA } };
    default:
      return { lang: 'en' };
  }
}
