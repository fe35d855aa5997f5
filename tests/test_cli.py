import json

from click.testing import CliRunner

from tkg_indt.cli import main


def test_sources_lists_local_availability(data_dir):
    out = CliRunner().invoke(main, ["sources", "--data-dir", str(data_dir)])
    assert out.exit_code == 0
    assert "| YAGO | year |" in out.output and str(data_dir / "YAGO") in out.output
    assert "| GDELT | day |" in out.output and "not available" in out.output


def test_stats_json_on_real_yago(data_dir):
    out = CliRunner().invoke(main, ["stats", "--source", "YAGO", "--json", "--data-dir", str(data_dir)])
    assert out.exit_code == 0, out.output
    payload = json.loads(out.output)
    assert payload["splits"]["test"]["quads"] == 20026 and payload["splits"]["all"]["timestamps"] == 189
    assert payload["splits"]["test"]["first"] == "2013" and payload["splits"]["all"]["span"] == 189


def test_stats_table(data_dir):
    out = CliRunner().invoke(main, ["stats", "--source", "ICEWS14", "--data-dir", str(data_dir)])
    assert out.exit_code == 0
    assert "| train | 72,826 | 6,869 | 230 | 365 | 0 | 2014-01-01 .. 2014-12-31 (365 days) |" in out.output
