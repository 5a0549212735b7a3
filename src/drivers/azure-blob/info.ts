// The storage form's fields and the driver's flags, apart from its implementation: the driver
// registry lists them (admin driver info) without loading the driver (see ../registry.ts).
import { driverConfig, type FormItem, item } from '../types.js';

// OpenList's items, in its order (drivers/azure_blob/meta.go; root_folder_path from driver.RootPath).
export const ADDITIONAL: FormItem[] = [
  item('root_folder_path', 'string', { default: '/', required: true }),
  item('endpoint', 'string', {
    required: true,
    default: 'https://<accountname>.blob.core.windows.net/',
    help: 'e.g. https://accountname.blob.core.windows.net/. The full endpoint URL for Azure Storage, including the unique storage account name (3 ~ 24 numbers and lowercase letters only).',
  }),
  item('access_key', 'string', { required: true, help: 'The access key for Azure Storage, used for authentication. https://learn.microsoft.com/azure/storage/common/storage-account-keys-manage' }),
  item('container_name', 'string', { required: true, help: 'The name of the container in Azure Storage (created in the Azure portal). https://learn.microsoft.com/azure/storage/blobs/blob-containers-portal' }),
  item('sign_url_expire', 'number', { default: '4', help: 'The expiration time for SAS URLs, in hours.' }),
];

export const CONFIG = driverConfig({ name: 'Azure Blob Storage', localSort: true, checkStatus: true });
