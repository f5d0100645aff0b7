from chaja.language import detect_language, hangul_share


def test_detect_language():
    assert detect_language("리스트 렌더링") == "ko"
    assert detect_language("Rendering lists") == "en"
    assert detect_language("React 컴포넌트에서 state를 관리하는 방법") == "ko"
    assert detect_language("") == "en"


def test_share_counts_letters_only():
    assert hangul_share("가 a 1 !") == 0.5
