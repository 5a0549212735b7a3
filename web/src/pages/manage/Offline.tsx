import OfflineForm from '../../components/OfflineForm';
import { t } from '../../i18n';
import { PageHead } from './Table';
import { showTasks } from './Tasks';

export default function Offline() {
  return (
    <div>
      <PageHead title={t('m.offline_download')} />
      <div class="card">
        <OfflineForm onDone={() => showTasks('offline_download')} />
      </div>
    </div>
  );
}
