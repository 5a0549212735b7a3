import { render } from 'solid-js/web';
import App from './App';
import { loadLanguage } from './i18n';
import './styles.css';

void loadLanguage().finally(() => render(() => <App />, document.getElementById('root')!));
