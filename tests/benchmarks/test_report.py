"""benchmarks.report.update_readme: the README gets the machine and targets, not the long tables."""

from benchmarks.report import README_END, README_START, update_readme


def test_readme_gets_the_head_of_the_results_and_a_pointer(tmp_path):
    results = tmp_path / "benchmarks" / "results" / "results.md"
    results.parent.mkdir(parents=True)
    results.write_text("## Benchmark results\n\nMeasured on X.\n\n### Targets (issue 11)\n\n| t | m | met |\n\n"
                       "### Throughput\n\n| long table |\n![f.png](f.png)\n")
    readme = tmp_path / "README.md"
    readme.write_text(f"# title\n\nbefore\n{README_START}\nold text\n{README_END}\nafter\n")
    assert update_readme(readme, results)
    text = readme.read_text()
    assert text.startswith("# title\n\nbefore\n") and text.endswith(f"{README_END}\nafter\n")
    inside = text.split(README_START)[1].split(README_END)[0]
    assert "Measured on X." in inside and "| t | m | met |" in inside
    assert "old text" not in inside and "long table" not in inside and "## Benchmark results" not in inside
    assert "[`benchmarks/results/results.md`](benchmarks/results/results.md)" in inside


def test_readme_without_markers_is_left_alone(tmp_path):
    results = tmp_path / "results.md"
    results.write_text("## Benchmark results\n")
    readme = tmp_path / "README.md"
    readme.write_text("# no markers\n")
    assert not update_readme(readme, results)
    assert readme.read_text() == "# no markers\n"
