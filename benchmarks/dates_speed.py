"""DateRule throughput on ~1 MB per language of realistic clinical prose (dates ~1 per 700 chars).

Also reports a 'dense' variant (a date in every sentence) as a worst case.
Run: .venv/bin/python benchmarks/dates_speed.py
"""

import random
import time

from polydeid.core.segments import Segment
from polydeid.detect.rules.dates import DateRule

SENTENCES = {
    "en": [
        "The patient is a 46-year-old woman with a two-week history of productive cough and fever.",
        "On examination she was alert, temperature 38.4 °C, pulse 104/min, BP 128/76 mmHg, SpO2 94% on air.",
        "Chest auscultation revealed crackles at the right base; no peripheral oedema.",
        "Full blood count showed Hb 11.2 g/dL, WBC 14.6 x10^9/L with neutrophilia, platelets 310.",
        "CRP 86 mg/L, creatinine 92 umol/L, sodium 134 mmol/L, potassium 4.1 mmol/L.",
        "She was started on amoxicillin-clavulanate 625 mg three times daily and azithromycin 500 mg once daily.",
        "Paracetamol 1 g every 6 hours as needed for pain, which she rated 4/10.",
        "Chest X-ray confirmed right lower lobe consolidation without effusion.",
        "She has a background of type 2 diabetes on metformin 1 g twice daily and hypertension.",
        "Her HbA1c was 7.9% and her last eye review was normal.",
        "She lives with her husband and two children and works as a primary school teacher.",
        "Plan: continue antibiotics for 7 days, review with repeat CRP, safety-net advice given.",
    ],
    "de": [
        "Die 46-jährige Patientin stellte sich mit seit zwei Wochen bestehendem produktivem Husten und Fieber vor.",
        "Bei Aufnahme wach und orientiert, Temperatur 38,4 °C, Puls 104/min, RR 128/76 mmHg, SpO2 94 % bei Raumluft.",
        "Auskultatorisch feinblasige Rasselgeräusche rechts basal, keine peripheren Ödeme.",
        "Laborchemisch Hb 11,2 g/dl, Leukozyten 14,6 /nl, Thrombozyten 310 /nl, CRP 86 mg/l.",
        "Wir begannen eine Therapie mit Amoxicillin/Clavulansäure 875/125 mg 1-0-1 und Azithromycin 500 mg 1-0-0.",
        "Bei Schmerzen Paracetamol 1 g bis zu viermal täglich, Schmerzskala 4/10.",
        "Im Röntgen-Thorax zeigte sich ein Infiltrat im rechten Unterlappen ohne Erguss.",
        "Vorerkrankungen: Diabetes mellitus Typ 2, arterielle Hypertonie, Z. n. Appendektomie.",
        "HbA1c 7,9 %, Augenhintergrund zuletzt unauffällig.",
        "Wir empfehlen die Fortführung der antibiotischen Therapie für insgesamt 7 Tage.",
    ],
    "sw": [
        "Mgonjwa ni mwanamke wa miaka 46 mwenye kikohozi na homa kwa wiki mbili.",
        "Alipochunguzwa alikuwa na joto la 38.4 °C, mapigo 104 kwa dakika, BP 128/76 mmHg.",
        "Kifua kilikuwa na sauti za crackles upande wa kulia chini.",
        "Vipimo vya damu: Hb 11.2 g/dL, WBC 14.6, CRP 86 mg/L.",
        "Alianzishiwa amoxicillin 500 mg mara tatu kwa siku na paracetamol 1 g inapohitajika.",
        "Ana historia ya kisukari aina ya pili na shinikizo la damu.",
        "Anaishi na mume wake na watoto wawili katika kijiji.",
        "Mpango: aendelee na dawa kwa siku 7 na arudi kliniki kwa uchunguzi.",
    ],
    "zh": [
        "患者女性，46岁，咳嗽咳痰伴发热两周。",
        "查体：体温38.4℃，脉搏104次/分，血压128/76 mmHg，血氧饱和度94%。",
        "右下肺可闻及湿啰音，双下肢无水肿。",
        "血常规：血红蛋白112 g/L，白细胞14.6×10^9/L，C反应蛋白86 mg/L。",
        "予阿莫西林克拉维酸钾625毫克每日三次口服，阿奇霉素500毫克每日一次。",
        "胸片示右下肺炎症，无胸腔积液。",
        "既往有2型糖尿病及高血压病史，口服二甲双胍1克每日两次。",
        "计划继续抗感染治疗7天，复查C反应蛋白。",
    ],
    "ru": [
        "Пациентка 46 лет поступила с жалобами на кашель с мокротой и лихорадку в течение двух недель.",
        "При осмотре: температура 38,4 °C, ЧСС 104 в минуту, АД 128/76 мм рт. ст., SpO2 94 %.",
        "Аускультативно влажные хрипы справа в нижних отделах.",
        "В анализах: Hb 112 г/л, лейкоциты 14,6×10^9/л, СРБ 86 мг/л.",
        "Назначен амоксициллин/клавуланат 875/125 мг 2 раза в сутки и азитромицин 500 мг 1 раз в сутки.",
        "В анамнезе сахарный диабет 2 типа и артериальная гипертензия.",
        "Рекомендовано продолжить антибактериальную терапию 7 дней.",
    ],
    "ar": [
        "المريضة امرأة تبلغ من العمر 46 عاما تعاني من سعال وحمى منذ أسبوعين.",
        "عند الفحص كانت الحرارة 38.4 درجة، النبض 104 في الدقيقة، الضغط 128/76 ملم زئبق.",
        "سمعت خشخشة في قاعدة الرئة اليمنى ولا توجد وذمة.",
        "الهيموغلوبين 11.2 غ/دل، الكريات البيضاء 14.6، البروتين التفاعلي 86 ملغ/ل.",
        "بدأ العلاج بأموكسيسيلين 625 ملغ ثلاث مرات يوميا وأزيثروميسين 500 ملغ مرة يوميا.",
        "لديها تاريخ من السكري من النوع الثاني وارتفاع ضغط الدم.",
        "الخطة: متابعة المضادات الحيوية لمدة 7 أيام ثم المراجعة.",
    ],
}
DATE_SENTENCES = {
    "en": [
        "She was admitted on {d} via the emergency department.",
        "Follow-up appointment booked for {d}.",
    ],
    "de": [
        "Stationäre Aufnahme am {d} über die Notaufnahme.",
        "Wiedervorstellung am {d} vereinbart.",
    ],
    "sw": ["Alilazwa tarehe {d} kupitia idara ya dharura.", "Atarudi kliniki tarehe {d}."],
    "zh": ["于{d}经急诊收入院。", "定于{d}门诊复查。"],
    "ru": ["Поступила {d} через приёмное отделение.", "Повторный осмотр назначен на {d}."],
    "ar": ["أدخلت المستشفى بتاريخ {d} عن طريق الطوارئ.", "موعد المراجعة في {d}."],
}
DATES = {
    "en": ["12/03/2024", "12 March 2024", "March 12, 2024", "2024-03-12", "3rd of April"],
    "de": ["12.03.2024", "12. März 2024", "19.3.", "März 2024", "2024-03-12"],
    "sw": ["12/03/2024", "12 Machi 2024", "Machi 2024", "2024-03-12"],
    "zh": ["2024年3月12日", "2024-03-12", "3月12日"],
    "ru": ["12.03.2024", "12 марта 2024 г.", "март 2024"],
    "ar": ["12/03/2024", "12 مارس 2024", "١٢ آذار ٢٠٢٤"],
}


def build(lang: str, every: int, size: int = 1_000_000) -> str:
    rng = random.Random(11)
    out, n, i = [], 0, 0
    while n < size:
        if i % every == every - 1:
            s = rng.choice(DATE_SENTENCES[lang]).format(d=rng.choice(DATES[lang]))
        else:
            s = rng.choice(SENTENCES[lang])
        s += "\n" if rng.random() < 0.2 else " "
        out.append(s)
        n += len(s.encode())
        i += 1
    return "".join(out)


def run(every: int, label: str) -> None:
    rule = DateRule()
    total_mb = total_s = 0.0
    for lang in SENTENCES:
        text = build(lang, every)
        rule.detect(Segment(text=text[:2000], lang=lang))  # compile and cache patterns
        best = min(_timed(rule, text, lang) for _ in range(5))
        mb = len(text.encode()) / 1e6
        n = len(rule.detect(Segment(text=text, lang=lang)))
        total_mb += mb
        total_s += best
        print(f"  {label} {lang}: {mb / best:6.1f} MB/s ({n} dates in {mb:.2f} MB)")
    print(f"{label} overall: {total_mb / total_s:.1f} MB/s")


def _timed(rule: DateRule, text: str, lang: str) -> float:
    t0 = time.process_time()
    rule.detect(Segment(text=text, lang=lang))
    return time.process_time() - t0


if __name__ == "__main__":
    run(30, "sparse")
    run(8, "realistic")
    run(1, "dense")
