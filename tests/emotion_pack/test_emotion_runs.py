"""The emotion plugin end to end: conditioning, patience, ###UNSATISFIED###, metrics, bad input."""

import json
from statistics import mean

import pytest

from tau_emotion.core import hookimpl
from tau_emotion.core.manager import get_plugin_manager
from tau_emotion.core.models import Message, RunConfig
from tau_emotion.core.runner import prepare_run, run_sync
from tau_emotion.plugins.oracle_agent import OracleAgent
from tau_emotion.tracer.plan import feeling_of

IMPATIENT = ["anger.frustration/cold/high/skeptical", "anger.exasperation/cold/high/skeptical",
             "anger.bitterness/cold/high/skeptical"]
PATIENT = "enjoyment.peace/warm/low/trusting"


def _run(plugins, tmp_path, pm=None, **kw):
    options = {"progress": {"no_progress": True}, **kw.pop("options", {})}
    config = RunConfig(plugins=plugins, options=options, **kw)
    run = prepare_run(config, str(tmp_path / "r.sqlite"), pm=pm)
    summary = run_sync(run)
    return run, summary, run.store.results(run.run_id)


@pytest.mark.slow
def test_oracle_with_emotional_scripted_user_solves_every_airline_task(tmp_path):
    run, summary, results = _run(["emotion", "airline"], tmp_path, trials=3)
    assert all(t.block("emotion") is not None and t.block("emotion").anchor for t in run.tasks)
    assert len({t.block("emotion").id for t in run.tasks}) > 5
    assert summary["pass_hat_k"]["3"] == 1.0, [r.task_id for r in results if r.reward != 1]
    assert summary["unsatisfied_rate"] == 0
    assert set(summary["by_tag"]["emotion.family"]) <= {"anger", "disgust", "fear", "sadness", "enjoyment"}
    assert sum(g["n_tasks"] for g in summary["by_tag"]["emotion.family"].values()) == len(run.tasks)
    first_user = results[0].messages[0]
    assert first_user.role == "user" and first_user.content


class AskingAgent(OracleAgent):
    """Asks the user three things only the database knows, then does the job like the oracle."""

    QUESTIONS = ["Before I start, what exact balance does the account hold right now?",
                 "And what is the internal ledger reference of that account?",
                 "Could you also tell me the current interest figure on it?"]

    def __init__(self, episode):
        super().__init__(episode)
        self.asked = 0

    async def act(self, messages):
        if self.asked < len(self.QUESTIONS):
            self.asked += 1
            return Message(role="assistant", content=self.QUESTIONS[self.asked - 1])
        return await super().act(messages)


class AskingPlugin:
    @hookimpl
    def tau_register_agents(self, register):
        register("asking", AskingAgent)


def _asking_run(condition, tmp_path, blocked=()):
    pm = get_plugin_manager(["emotion", "mock"], list(blocked), extra=[AskingPlugin()])
    _, summary, results = _run(["emotion", "mock"], tmp_path / condition.replace("/", "_"), pm=pm, trials=2,
                               agent="asking", options={"emotion": {"emotion": condition}}, max_steps=40)
    return summary, results


def test_impatient_users_give_up_on_an_agent_that_asks_what_tools_know(tmp_path):
    impatient = [_asking_run(c, tmp_path) for c in IMPATIENT]
    patient_summary, patient_results = _asking_run(PATIENT, tmp_path)
    impatient_results = [r for _, rs in impatient for r in rs]
    unsat = sum(r.termination.reason == "unsatisfied" for r in impatient_results)
    impatient_reward = mean(r.reward for r in impatient_results)
    patient_reward = mean(r.reward for r in patient_results)
    assert unsat > 0, f"impatient UNSATISFIED count {unsat} of {len(impatient_results)}"
    assert impatient_reward < patient_reward, (
        f"mean reward impatient {impatient_reward:+.3f} vs patient {patient_reward:+.3f}")
    assert patient_summary["unsatisfied_rate"] == 0, patient_summary["terminations"]
    assert all(r.reward == -1.0 for r in impatient_results if r.termination.reason == "unsatisfied")
    gave_up = next(r for r in impatient_results if r.termination.reason == "unsatisfied")
    assert "###UNSATISFIED###" in gave_up.messages[-1].content


def test_no_unsatisfied_ablates_the_terminator(tmp_path):
    _, results = _asking_run(IMPATIENT[0], tmp_path, blocked=["unsatisfied"])
    assert all(r.termination.reason != "unsatisfied" for r in results)
    assert all(r.reward != -1.0 for r in results)


def _llm_config(server, **kw):
    return dict(agent="tool_calling", user="llm", trials=1, task_ids=["mock-001"],
                options={"agent": {"agent_model": "openai/agent", "agent_api_base": server.base_url},
                         "user": {"user_model": "openai/user", "user_api_base": server.base_url},
                         "model_calls": {"retry_wait": 0.01}, "emotion": {"emotion": "fear.anxiety/warm/high/cautious"}},
                **kw)


@pytest.mark.parametrize("blocked", [[], ["unsatisfied"]])
def test_llm_user_sending_unsatisfied_mid_task(openai_server, tmp_path, blocked):
    openai_server.script("agent", {"content": "Please hold, what is your account id?"},
                         {"content": "Still checking things, please hold."})
    openai_server.script("user", {"content": "I need to move 200 dollars from acc-1 to acc-2, quickly."},
                         {"content": "This is hopeless.\n###UNSATISFIED###"},
                         {"content": "###STOP###"})
    pm = get_plugin_manager(["emotion", "mock"], blocked)
    _, summary, [result] = _run(["emotion", "mock"], tmp_path, pm=pm, **_llm_config(openai_server))
    user_system = [r for r in openai_server.requests if r["model"] == "user"][0]["messages"][0]["content"]
    assert "<emotion>" in user_system and "(condition: fear.anxiety/warm/high/cautious)" in user_system
    if blocked:
        assert "###UNSATISFIED###" not in user_system
        assert result.termination.reason == "user_stop" and result.reward == 0.0
    else:
        assert "###UNSATISFIED###" in user_system
        assert result.termination.reason == "unsatisfied" and result.reward == -1.0
        assert summary["terminations"]["unsatisfied"] == 1
        assert "This is hopeless." in result.messages[-1].content


def test_llm_user_prompt_carries_the_tasks_feeling(openai_server, tmp_path):
    """The paper's emotional instruction is the task instruction plus its feeling: a Tracer task's `meta.feeling` reaches
    the LLM user's prompt beside the condition's anchor."""
    from tau_emotion.core.manager import get_plugin_manager as manager

    task = next(t for t in manager(["emotion", "airline"]).catalog("domains").get("airline").tasks("test")
                if feeling_of(t))
    openai_server.script("agent", {"content": "How can I help?"})
    openai_server.script("user", {"content": "###STOP###"})
    config = {**_llm_config(openai_server), "task_ids": [task.id]}
    config["options"] = {k: v for k, v in config["options"].items() if k != "emotion"}
    _run(["emotion", "airline"], tmp_path, **config)
    user_system = [r for r in openai_server.requests if r["model"] == "user"][0]["messages"][0]["content"]
    block = user_system.split("<emotion>")[1]
    assert feeling_of(task) in block and task.blocks["emotion"]["anchor"] in block


def test_emotion_control_runs_each_task_both_ways(tmp_path):
    run, summary, results = _run(["emotion", "mock"], tmp_path, trials=1, options={"emotion": {"emotion_control": True}})
    assert len(run.tasks) == 8
    assert sum(t.block("emotion") is None for t in run.tasks) == 4
    assert summary["emotion_vs_control"]["control"]["avg_at_k"] == 1.0
    assert summary["emotion_vs_control"]["emotional"]["avg_at_k"] == 1.0
    assert {f"emotion.{d}" for d in ("family", "emotion", "politeness", "urgency", "trust")} <= set(summary["by_tag"])


def test_fixed_condition_and_none_control(tmp_path):
    run, _, _ = _run(["emotion", "mock"], tmp_path, trials=1, options={"emotion": {"emotion": "family:fear"}})
    assert {t.block("emotion").family for t in run.tasks} == {"fear"}
    run, summary, _ = _run(["emotion", "mock"], tmp_path / "n", trials=1, options={"emotion": {"emotion": "none"}})
    assert all(t.block("emotion") is None for t in run.tasks)
    assert "emotion.family" not in summary["by_tag"]


def test_seeded_conditions_are_reproducible(tmp_path):
    a, _, _ = _run(["emotion", "mock"], tmp_path / "a", trials=1, seed=7)
    b, _, _ = _run(["emotion", "mock"], tmp_path / "b", trials=1, seed=7)
    c, _, _ = _run(["emotion", "mock"], tmp_path / "c", trials=1, seed=8)
    assert [t.block("emotion") for t in a.tasks] == [t.block("emotion") for t in b.tasks]
    assert [t.block("emotion") for t in a.tasks] != [t.block("emotion") for t in c.tasks]


def test_cli_emotion_options_and_bad_condition_errors(tau, tmp_path):
    result = tau("run", "--plugins", "emotion,mock", "--emotion", "fear.anxiety/warm/hihg/cautious")
    assert result.exit_code == 1 and "did you mean 'high'" in result.output and "Traceback" not in result.output
    result = tau("run", "--plugins", "emotion,mock", "--emotion", "family:feer")
    assert result.exit_code == 1 and "did you mean 'fear'" in result.output
    assert "anger" in result.output and "enjoyment" in result.output
    result = tau("run", "--plugins", "emotion,mock", "--emotion", "famly:fear")
    assert result.exit_code == 1 and "did you mean 'family:fear'?" in result.output
    assert len(result.output.strip().splitlines()) == 1
    result = tau("run", "--plugins", "emotion,mock", "--trials", "1", "--emotion-control", "--no-progress",
                 "--summary-json", "s.json")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["n_tasks"] == 8 and summary["unsatisfied_rate"] == 0
    assert "emotion.family" in summary["by_tag"]


def test_malformed_emotion_block_names_file_task_and_field(tau, make_pack):
    data = make_pack("emopack", "emo")
    (data / "tasks.json").write_text(json.dumps([{
        "id": "emo-1", "domain": "emo", "user": {"instruction": "x"}, "gold": {"outputs": ["x"]},
        "emotion": {"family": "fear", "emotion": "anxeity", "politeness": "warm", "urgency": "high",
                    "trust": "cautious"}}]))
    result = tau("run", "--plugins", "emotion,emopack")
    assert result.exit_code == 1
    out = result.output
    assert "tasks.json: task 'emo-1': block 'emotion'" in out and "did you mean 'anxiety'" in out
    assert "Traceback" not in out


def test_classify_reads_the_condition_from_the_instruction(tmp_path):
    from tau_emotion.emotion_pack.classifier import FeelingsClassifier

    run, summary, _ = _run(["emotion", "mock"], tmp_path, trials=1, options={"emotion": {"emotion": "classify"}})
    classifier = FeelingsClassifier.load()
    for task in run.tasks:
        expected = classifier.classify(task.user.instruction).condition
        assert task.block("emotion").id == expected.id
    assert summary["avg_at_k"] == 1.0


def test_a_plugin_chooses_conditions_through_tau_emotion_condition(tmp_path):
    from tau_emotion.emotion_pack.taxonomy import Condition

    class Chooser:
        @hookimpl
        def tau_emotion_condition(self, task, config, rng):
            if task.id == "mock-002":
                return Condition("sadness", "sorrow", "warm", "low", "trusting")
            return None

    pm = get_plugin_manager(["emotion", "mock"], extra=[Chooser()])
    run, _, results = _run(["emotion", "mock"], tmp_path, pm=pm, trials=1, options={"emotion": {"emotion": "family:fear"}})
    families = {t.id: t.block("emotion").family for t in run.tasks}
    assert families["mock-002"] == "sadness" and {families[t] for t in families if t != "mock-002"} == {"fear"}
    assert {r.tags["emotion.family"] for r in results if r.task_id == "mock-002"} == {"sadness"}


def test_the_printed_summary_has_a_row_per_arm_with_a_control(tau):
    out = tau("run", "--plugins", "emotion,mock", "--emotion-control", "--trials", "1", "--no-progress").output
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.startswith(("arm:", "all "))}
    assert rows == {"all": "8", "arm:emotional": "4", "arm:control": "4"}


def test_scripted_emotional_user_opens_with_the_tasks_own_feeling(tmp_path):
    """A Tracer task's feelings text (written for its situation, read back as its condition) is what the offline
    emotional user says first, not a generic lead that presumes a history ("I've tried several times already")."""
    from tau_emotion.core.manager import get_plugin_manager as manager
    from tau_emotion.emotion_pack import expression

    task = next(t for t in manager(["emotion", "airline"]).catalog("domains").get("airline").tasks("test")
                if feeling_of(t))
    _, _, [result] = _run(["emotion", "airline"], tmp_path, agent="oracle", user="scripted", trials=1,
                          task_ids=[task.id])
    first = next(m.content for m in result.messages if m.role == "user")
    assert feeling_of(task).strip().rstrip(".") in first
    leads = [x for xs in expression.phrases()["opening"]["lead"].values() for x in xs]
    assert not [lead for lead in leads if lead in first]
    assert result.reward == 1.0
