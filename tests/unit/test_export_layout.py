"""The exporter's layout: Nova's 79 columns, the module's meaning kept."""

import ast
import glob
import os

import harness
from harness import bugs
from harness.export import layout
from harness.export import nova_test
from harness.export import refusal
from harness import testing

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(harness.__file__)))


class WrapTest(testing.TestCase):

    def test_a_call_s_items_hang_after_its_bracket(self):
        self.assertEqual(
            ["        self.servers['vm1'] = self._migrate_server(",
             "            self.servers['vm1'], host='dst')"],
            layout.wrap("        self.servers['vm1'] = self._migrate_server("
                        "self.servers['vm1'], host='dst')"))

    def test_an_item_still_too_long_is_wrapped_in_turn(self):
        lines = layout.wrap(
            "        self.assertTrackerFields('h1', {'cells': {0: "
            "{'cpu_usage': 2, 'memory_usage': 512}, 1: {'cpu_usage': 0, "
            "'memory_usage': 0}}})")
        self.assertEqual("        self.assertTrackerFields(", lines[0])
        self.assertTrue(all(len(line) <= 79 for line in lines), lines)
        self.assertEqual(
            ast.dump(ast.parse("self.assertTrackerFields('h1', {'cells': "
                               "{0: {'cpu_usage': 2, 'memory_usage': 512}, "
                               "1: {'cpu_usage': 0, 'memory_usage': 0}}})")),
            ast.dump(ast.parse('\n'.join(line[8:] for line in lines))))

    def test_the_items_of_a_bracket_an_earlier_line_opened(self):
        # A unit's continuation line: its items at its own indent, the
        # closing bracket after the last; a subscript is not broken.
        self.assertEqual(
            ["            name='vm1', flavor_id=self.flavors['two'],",
             "            image_uuid=self.images['pinned'])"],
            layout.wrap("            name='vm1', flavor_id=self.flavors"
                        "['two'], image_uuid=self.images['pinned'])"))

    def test_a_long_string_as_adjacent_literals(self):
        lines = layout.wrap(
            '            \'{"name": "a", "vendor_id": "144d", "product_id": '
            '"a80a", "device_type": "type-PCI"}\',')
        self.assertEqual(
            ['            \'{"name": "a", "vendor_id": "144d", '
             '"product_id": "a80a", \'',
             '            \'"device_type": "type-PCI"}\','], lines)

    def test_a_comment(self):
        self.assertEqual(
            ['        # 10. inject before finish_revert_resize: '
             'update_available_resource on',
             '        # src'],
            layout.wrap('        # 10. inject before finish_revert_resize: '
                        'update_available_resource on src'))

    def test_a_short_line_is_left_alone(self):
        self.assertEqual(['    x = f(a, b)'], layout.wrap('    x = f(a, b)'))

    def test_a_layout_that_changes_the_module_is_refused(self):
        # Lines split where no bracket holds them together parse to
        # another module (or none): fit says so rather than write it.
        self.assertRaises(layout.LayoutChanged, layout.fit,
                          'x = 1\n' + 'y = ' + ', '.join(['1'] * 40) + '\n')


class ExportedLayoutTest(testing.TestCase):

    def test_every_exported_module_fits_nova_s_columns(self):
        paths = [bug.path for bug in bugs.known()] + sorted(
            glob.glob(os.path.join(ROOT, 'findings', '*.yaml')))
        exported = 0
        for path in paths:
            try:
                source = nova_test.export(path)
            except refusal.Refused:
                try:
                    # Those that import the harness (hosts of their own
                    # options) too.
                    source = nova_test.export(path, with_harness=True)
                except refusal.Refused:
                    continue
            exported += 1
            long_lines = [line for line in source.splitlines()
                          if len(line) > 79]
            self.assertEqual([], long_lines, path)
            names = [node.name for node in ast.walk(ast.parse(source))
                     if isinstance(node, ast.FunctionDef)
                     and node.name.startswith('test_')]
            self.assertEqual(len(names), len(set(names)), path)
        self.assertGreaterEqual(exported, 66)

    def test_method_names_cut_keep_the_words_that_tell_them_apart(self):
        base = ('periodic on the source between resize_instance and '
                'finish_resize, then ')
        names = nova_test.method_names([base + 'confirm', base + 'revert',
                                        'a short one'])
        self.assertEqual(
            {base + 'confirm': 'test_periodic_on_the_source_between_'
                               'resize_instance_and_confirm',
             base + 'revert': 'test_periodic_on_the_source_between_'
                              'resize_instance_and_revert',
             'a short one': 'test_a_short_one'}, names)
