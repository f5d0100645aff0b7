"""Fixed Korean and English test texts, written for these tests."""
from __future__ import annotations

KO_PARAGRAPH = (
    "우리 동네 도서관은 지난달부터 밤 열 시까지 문을 연다. 퇴근한 직장인들이 창가 자리에 앉아 "
    "노트북을 펴고, 고등학생들은 시험 기간이 되면 열람실을 가득 채운다. 사서 선생님은 새로 들어온 "
    "책을 분야별로 정리하면서 이용자가 원하는 자료를 빨리 찾을 수 있도록 검색 시스템에 키워드를 "
    "꼼꼼하게 입력한다. 어린이 코너에서는 매주 토요일 오전에 그림책 읽어 주기 행사가 열리는데, "
    "부모와 아이가 함께 바닥에 앉아 이야기를 듣는 모습이 정겹다. 도서관 일 층 카페에서는 따뜻한 "
    "보리차를 무료로 나눠 주고, 겨울에는 난방이 잘 되어 있어 추위를 피하러 오는 어르신도 많다. "
    "대출 기간은 이 주이고 한 번 연장할 수 있으며, 예약한 책이 도착하면 휴대전화로 문자가 온다."
)

EN_PARAGRAPH = (
    "The trail to the ridge starts behind the old ranger station and climbs through a forest of "
    "pine and birch for about three kilometres. Early in the morning the air is cold enough that "
    "you can see your breath, and the only sounds are woodpeckers and the creek running beside the "
    "path. After the second bridge the trees thin out, the slope gets steeper, and loose stones make "
    "every step a small negotiation. Most hikers stop at the flat rock halfway up to drink water and "
    "eat something salty. From the top you can count four lakes on a clear day, and in late autumn "
    "the larches on the north face turn a bright, almost electric yellow. Bring a wind jacket even in "
    "summer, because the weather on the ridge changes in minutes, and leave before noon if clouds "
    "start building in the west."
)

MIXED = (
    "오늘 회의에서는 hybrid search 성능을 다시 측정했다. BM25 점수와 vector 유사도를 RRF로 합치니 "
    "recall@10이 0.71에서 0.78로 올랐고, latency는 p95 기준 42 ms였다. 다음 sprint에는 "
    "Kiwi 형태소 분석기와 bigram 방식을 비교하고, 결과를 docs/encoders.md에 정리할 예정이다."
)

SHORT = [
    "검색",
    "도서관 운영 시간",
    "how to reset my password",
    "비밀번호를 잊어버렸어요",
    "Seoul weather tomorrow",
    "점심 뭐 먹지? 🍜🍣",
    "I love this 😀👍 so much!!!",
    "🇰🇷🇺🇸 flags and 👨‍👩‍👧 family",
    "ＡＢＣ　全角 ｶﾀｶﾅ and ﬁ ligature",
    "tabs\tand\nnewlines   and    spaces",
    "  leading and trailing spaces  ",
    "C'est déjà l'été, naïve café",
    "a<s>b</s> literal specials <mask>",
]

EMPTY = ""

#: well over one 510-token window: exercises windowing (three windows)
LONG = " ".join([KO_PARAGRAPH, EN_PARAGRAPH, MIXED, KO_PARAGRAPH.replace("도서관", "미술관"),
                 EN_PARAGRAPH.replace("ridge", "summit"), KO_PARAGRAPH.replace("책", "자료")])

PASSAGES = [KO_PARAGRAPH, EN_PARAGRAPH, MIXED, LONG, EMPTY, *SHORT]
QUERIES = [EMPTY, *SHORT, MIXED]
