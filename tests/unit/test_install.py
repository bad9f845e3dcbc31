"""Finding the installed Nova's files, and saying clearly when they're gone."""

from importlib import metadata
import os
from unittest import mock


from harness.cloud import install
from harness.core import errors
from harness import testing


class TestApiPasteIni(testing.TestCase):

    def test_found_where_the_wheel_installed_it(self):
        path = install.nova_api_paste_ini()
        self.assertTrue(os.path.isabs(path))
        self.assertTrue(os.path.isfile(path))
        self.assertEqual(os.path.join('etc', 'nova', 'api-paste.ini'),
                         os.path.join(*path.split(os.sep)[-3:]))

    def test_missing_nova_is_a_clear_error(self):
        with mock.patch.object(metadata, 'distribution',
                               side_effect=metadata.PackageNotFoundError):
            exc = self.assertRaises(errors.SetupError,
                                    install.nova_api_paste_ini)
        self.assertIn('Nova is not installed', str(exc))

    def test_missing_file_is_a_clear_error(self):
        dist = mock.Mock(version='34.0.0', files=[])
        with mock.patch.object(metadata, 'distribution', return_value=dist):
            exc = self.assertRaises(errors.SetupError,
                                    install.nova_api_paste_ini)
        self.assertIn('etc/nova/api-paste.ini', str(exc))
        self.assertIn('34.0.0', str(exc))
