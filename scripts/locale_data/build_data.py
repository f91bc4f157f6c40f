"""Extract name and place lists from Faker / niafaker / ug-address / rwanda-geo-data /
kenya-data / tanzania-locations (downloaded wheels, unpacked under x/) into polydeid TOML."""
import importlib, json, random, sqlite3, sys, unicodedata
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "x" / "faker"))
sys.path.insert(0, str(HERE / "x" / "ug_address"))
sys.path.insert(0, str(HERE / "x" / "tanzania_locations"))
sys.path.insert(0, str(HERE))
import curated_names as C  # noqa
import curated_places as CP  # noqa

ROOT = HERE.parent.parent / "src" / "polydeid" / "locales"
FAKER = "faker 40.54.0 (PyPI, MIT licence)"
NIA = "niafaker 1.0.0 (PyPI, MIT licence)"
CUR = "curated by polydeid contributors from common names (public knowledge)"
CURP = "curated by polydeid contributors: well-known public geographic names"


def q(s):
    return json.dumps(s, ensure_ascii=False)


def arr(values, per_line=8):
    values = list(values)
    lines = []
    for i in range(0, len(values), per_line):
        lines.append("    " + ", ".join(q(v) for v in values[i:i + per_line]) + ",")
    return "[\n" + "\n".join(lines) + "\n]" if values else "[]"


def clean(values, *, ascii_only=False, limit=None, seed=0):
    out = []
    seen = set()
    for v in values:
        v = unicodedata.normalize("NFC", str(v).strip())
        if not v or v.casefold() in seen:
            continue
        if ascii_only and not all(c.isascii() for c in v):
            continue
        seen.add(v.casefold())
        out.append(v)
    if limit and len(out) > limit:
        out = random.Random(seed).sample(out, limit)
    return sorted(out, key=lambda s: s.casefold())


def faker_person(loc):
    return importlib.import_module(f"faker.providers.person.{loc}").Provider


def faker_address(loc):
    return importlib.import_module(f"faker.providers.address.{loc}").Provider


def nia(cc, kind):
    return json.loads((HERE / "x/niafaker/niafaker/locales" / cc / f"{kind}.json").read_text())


def pool_table(header, pool):
    parts = [f"[{header}]"]
    for key in ("given_male", "given_female", "family", "family_male", "family_female",
                "middle_male", "middle_female", "clans"):
        if pool.get(key):
            parts.append(f"{key} = {arr(pool[key])}")
    return "\n".join(parts)


def write_names(code, sources, fmt, default, countries=None, licence="MIT (Faker, niafaker); curated lists CC0"):
    lines = ["[meta]", f"sources = {arr(sources, 1)}", f"licence = {q(licence)}",
             "description = " + q("Given and family names for surrogates; not a list of real persons."), ""]
    lines.append("[format]")
    lines.append(f"order = {q(fmt.get('order', 'given_first'))}")
    lines.append(f"joiner = {q(fmt.get('joiner', ' '))}")
    if "family_words" in fmt:
        lines.append(f"family_words = {fmt['family_words']}")
    lines.append(f"titles = {arr(fmt.get('titles', []))}")
    lines.append("")
    lines.append(pool_table("default", default))
    for cc, pool in (countries or {}).items():
        lines.append("")
        lines.append(pool_table(f"countries.{cc}", pool))
    path = ROOT / "languages" / code / "names.toml"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    print(path, sum(len(v) for v in default.values()))


def fk(loc, limit=400, seed=0):
    P = faker_person(loc)
    d = {
        "given_male": clean([n for n in P.first_names_male if n not in ("María", "Maria")], limit=1000, seed=seed),
        "given_female": clean(P.first_names_female, limit=1000, seed=seed),
        "family": clean(P.last_names, limit=limit, seed=seed),
    }
    return d


def main_names():
    ug = nia("ug", "person"); ke = nia("ke", "person"); tz = nia("tz", "person"); rw = nia("rw", "person")
    et = nia("et", "person")
    en = fk("en_US")
    gb = fk("en_GB")
    en_default = {k: clean(en[k] + gb[k], limit=None if k != "family" else 600) for k in en}
    ug_pool = {
        "given_male": clean(C.UG_CHRISTIAN_MALE + ug["male_first_names"]),
        "given_female": clean(C.UG_CHRISTIAN_FEMALE + [n for n in ug["female_first_names"] if not n.startswith("Na")]),
        "family_male": clean(C.GANDA_MALE + C.UG_OTHER_FAMILY),
        "family_female": clean(C.GANDA_FEMALE + C.UG_OTHER_FEMALE),
    }
    kP = faker_person("en_KE")
    ke_pool = {
        "given_male": clean(C.KE_CHRISTIAN_MALE + ke["male_first_names"] + list(kP.first_names_male), limit=400),
        "given_female": clean(C.KE_CHRISTIAN_FEMALE + ke["female_first_names"] + list(kP.first_names_female), limit=400),
        "family": clean(list(kP.last_names) + ke["last_names"], limit=600),
    }
    sP = faker_person("sw")
    tz_pool = {
        "given_male": clean(tz["male_first_names"] + list(sP.first_names_male), ascii_only=True),
        "given_female": clean(tz["female_first_names"] + list(sP.first_names_female), ascii_only=True),
        "family": clean(tz["last_names"] + list(sP.last_names), ascii_only=True),
    }
    rw_pool = {
        "given_male": clean(C.RW_GIVEN_MALE + rw["male_first_names"]),
        "given_female": clean(C.RW_GIVEN_FEMALE + rw["female_first_names"]),
        "family_male": clean(C.RW_FAMILY_MALE + rw["last_names"]),
        "family_female": clean(C.RW_FAMILY_FEMALE),
        "clans": clean(C.RW_CLANS),
    }
    en_titles = ["Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof", "Sr", "Rev", "Fr", "Hon", "Sir", "Dame", "Nurse"]
    in_pool = fk("en_IN")
    write_names("en", [f"{FAKER}: en_US, en_GB, en_KE, en_IN person providers", f"{NIA}: ug, ke, tz, rw person lists", CUR],
                {"titles": en_titles}, en_default,
                {"US": en, "GB": gb, "UG": ug_pool, "KE": ke_pool, "TZ": tz_pool, "RW": rw_pool, "IN": in_pool})
    write_names("lg", [f"{NIA}: ug person list", CUR + " (Ganda personal names, clan names ebika)"],
                {"titles": ["Ssebo", "Nnyabo", "Omwami", "Omukyala", "Dr", "Mr", "Mrs", "Ms", "Musawo"]},
                {**ug_pool, "clans": clean(C.GANDA_CLANS)})
    sw_default = {
        "given_male": clean(ke["male_first_names"] + tz["male_first_names"] + list(sP.first_names_male), ascii_only=True),
        "given_female": clean(ke["female_first_names"] + tz["female_first_names"] + list(sP.first_names_female), ascii_only=True),
        "family": clean(ke["last_names"] + tz["last_names"] + list(sP.last_names) + list(kP.last_names)[:300], ascii_only=True),
    }
    write_names("sw", [f"{FAKER}: sw and en_KE person providers", f"{NIA}: ke, tz, ug person lists", CUR],
                {"titles": ["Bw", "Bwana", "Bi", "Bibi", "Mama", "Baba", "Dkt", "Daktari", "Dr", "Mwl", "Mwalimu", "Mzee", "Sista"]},
                sw_default, {"KE": ke_pool, "TZ": tz_pool, "UG": ug_pool})
    write_names("rw", [f"{NIA}: rw person list", CUR + " (Kinyarwanda personal names, clan names amoko)"],
                {"titles": ["Bwana", "Madamu", "Muganga", "Dr", "Mme", "Mlle"]}, rw_pool)
    luo = {
        "given_male": clean(C.KE_CHRISTIAN_MALE + C.LUO_MALE[:20]),
        "given_female": clean(C.KE_CHRISTIAN_FEMALE + C.LUO_FEMALE),
        "family": clean(C.LUO_MALE),
    }
    write_names("luo", [CUR + " (Dholuo O-/A- names)", f"{FAKER}: en_KE person provider (cross-check)"],
                {"titles": ["Jaduong", "Dr", "Mr", "Mrs", "Bw", "Bi", "Nyar", "Ja"]}, luo)
    write_names("de", [f"{FAKER}: de_DE, de_AT, de_CH person providers"],
                {"titles": ["Herr", "Frau", "Hr", "Fr", "Dr", "Prof", "med", "von", "zu", "vom"]},
                fk("de_DE"), {"AT": fk("de_AT"), "CH": fk("de_CH")}, licence="MIT (Faker)")
    write_names("es", [f"{FAKER}: es_ES, es_MX, es_AR, es_CO person providers"],
                {"titles": ["Sr", "Sra", "Srta", "Dr", "Dra", "Don", "Doña", "de", "del", "la", "los"], "family_words": 2},
                fk("es_ES"), {"MX": fk("es_MX"), "AR": fk("es_AR"), "CO": fk("es_CO")}, licence="MIT (Faker)")
    write_names("fr", [f"{FAKER}: fr_FR, fr_BE, fr_CH person providers", f"{NIA}: rw person list", CUR],
                {"titles": ["Mme", "Mlle", "Mmes", "Dr", "Pr", "Me", "de", "du", "des", "le", "la"]},
                fk("fr_FR"), {"BE": fk("fr_BE"), "CH": fk("fr_CH"), "RW": rw_pool})
    write_names("pt", [f"{FAKER}: pt_PT, pt_BR person providers"],
                {"titles": ["Sr", "Sra", "Dr", "Dra", "Dona", "de", "da", "do", "dos", "das"]},
                fk("pt_PT"), {"BR": fk("pt_BR")}, licence="MIT (Faker)")
    write_names("it", [f"{FAKER}: it_IT person provider"],
                {"titles": ["Sig", "Sigra", "ra", "Dott", "Dottssa", "ssa", "Prof", "Dr", "di", "de", "del", "della"]},
                fk("it_IT"), licence="MIT (Faker)")
    write_names("nl", [f"{FAKER}: nl_NL, nl_BE person providers"],
                {"titles": ["Dhr", "Mevr", "Mw", "Dr", "Prof", "van", "de", "der", "den", "ter", "ten", "het", "te"]},
                fk("nl_NL"), {"BE": fk("nl_BE")}, licence="MIT (Faker)")
    vP = faker_person("vi_VN")
    vi = {
        "family": clean(C.VI_FAMILY + list(vP.last_names)),
        "middle_male": clean(C.VI_MIDDLE_MALE),
        "middle_female": clean(C.VI_MIDDLE_FEMALE),
        "given_male": clean(C.VI_GIVEN_MALE + [n for n in vP.first_names_male if " " not in n]),
        "given_female": clean(C.VI_GIVEN_FEMALE + [n for n in vP.first_names_female if " " not in n]),
    }
    write_names("vi", [f"{FAKER}: vi_VN person provider", CUR + " (Vietnamese family, middle and given names)"],
                {"order": "family_first", "titles": ["Ông", "Bà", "BS", "Bác", "sĩ", "ThS", "TS", "Cô", "Chú"]}, vi)
    aP = faker_person("ar_AA")
    ar = {
        "given_male": clean(aP.first_names_male, limit=400),
        "given_female": clean(aP.first_names_female),
        "family": clean([n for n in aP.first_names_male if " " not in n], limit=300, seed=1),
    }
    write_names("ar", [f"{FAKER}: ar_AA person provider (given names; family slot uses given names, as in patronymic names)"],
                {"titles": ["د", "السيد", "السيدة", "الدكتور", "الدكتورة", "بن", "بنت", "ابن", "أبو", "أم", "آل"]}, ar, licence="MIT (Faker)")
    zP = faker_person("zh_CN")
    zh = {"given_male": clean(zP.first_names_male), "given_female": clean(zP.first_names_female),
          "family": clean(zP.last_names, limit=300)}
    write_names("zh", [f"{FAKER}: zh_CN person provider"],
                {"order": "family_first", "joiner": "", "titles": ["先生", "女士", "医生", "小姐"]}, zh, licence="MIT (Faker)")
    rP = faker_person("ru_RU")
    ru = {"given_male": clean(rP.first_names_male), "given_female": clean(rP.first_names_female),
          "family_male": clean(rP.last_names_male), "family_female": clean(rP.last_names_female),
          "middle_male": clean(rP.middle_names_male), "middle_female": clean(rP.middle_names_female)}
    write_names("ru", [f"{FAKER}: ru_RU person provider (surnames and patronymics by gender)"],
                {"order": "family_first", "titles": ["г-н", "г-жа", "д-р", "доктор", "проф"]}, ru, licence="MIT (Faker)")
    hP = faker_person("hi_IN")
    hi = {"given_male": clean(hP.first_names_male), "given_female": clean(hP.first_names_female),
          "family": clean(hP.last_names)}
    write_names("hi", [f"{FAKER}: hi_IN person provider (Devanagari)"],
                {"titles": ["श्री", "श्रीमती", "सुश्री", "कुमारी", "डॉ", "डॉक्टर"]}, hi, licence="MIT (Faker)")
    am = {"given_male": clean(C.AM_MALE), "given_female": clean(C.AM_FEMALE), "family": clean(C.AM_MALE)}
    write_names("am", [CUR + " (Ethiopian names in Ge'ez script; family slot is the father's given name)",
                       f"{NIA}: et person list (Latin transliterations, cross-check)"],
                {"titles": ["አቶ", "ወይዘሮ", "ወይዘሪት", "ወ", "ሮ", "ዶ", "ር", "ዶክተር", "ፕሮፌሰር"]}, am,
                licence="CC0 (curated)")


def write_places(cc, sources, licence, lists, streets=(), patterns=(), facilities=(), orgs=()):
    lines = ["[meta]", f"sources = {arr(sources, 1)}", f"licence = {q(licence)}",
             "description = " + q("Place names and patterns for surrogates."), "", "[places]"]
    for kind, values in lists.items():
        if values:
            lines.append(f"{kind} = {arr(values)}")
    if streets:
        lines += ["", "[streets]", f"names = {arr(streets)}", f"patterns = {arr(patterns or ['{number} {street}'], 2)}"]
    if facilities:
        lines += ["", "[facilities]", f"patterns = {arr(facilities, 2)}"]
    if orgs:
        lines += ["", "[organizations]", f"patterns = {arr(orgs, 2)}"]
    folder = ROOT / "countries" / cc
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "places.toml").write_text("\n".join(lines) + "\n", "utf-8")
    print(cc, {k: len(v) for k, v in lists.items()})


def split(s):
    return [x.strip() for x in s.replace("\n", "").split("|") if x.strip()]


def tc(name):
    return " ".join(w.capitalize() if w.isupper() else w for w in name.split())


def main_places():
    from ug_address._data import _load
    d = _load()
    bad = ("TOWN COUNCIL", "DIVISION", "WARD", "COUNTY", "CELL", "ZONE", "ESTATE", "PRISON", "BARRACKS", "CAMP")
    def ug(kind, limit, suffix_ok=False):
        names = [v["name"] for v in d[kind]]
        if not suffix_ok:
            names = [n for n in names if not any(b in n.upper() for b in bad) and not any(ch.isdigit() for ch in n)]
        return clean([tc(n) for n in names], limit=limit)
    ugn = nia("ug", "address")
    org = ["{place} Primary School", "{place} Secondary School", "{place} Farmers' Cooperative", "{place} SACCO", "{place} Trading Company Ltd"]
    write_places("UG", ["ug-address 1.0.1 (PyPI, MIT licence): districts, sub-counties, parishes, villages (sampled)",
                        f"{NIA}: ug address (cities, regions, streets)", CURP],
                 "MIT (ug-address, niafaker)",
                 {"villages": ug("villages", 1500), "parishes": ug("parishes", 800), "subcounties": ug("subcounties", 500),
                  "districts": ug("districts", None), "cities": clean(ugn["cities"]), "regions": clean(ugn["regions"])},
                 clean(ugn["streets"] + ["Kira Road", "Ntinda Road", "Gayaza Road", "Masaka Road", "Hoima Road", "Mbarara Road", "Nile Avenue", "Lumumba Avenue", "Kyadondo Road", "Acacia Avenue"]),
                 ["Plot {number}, {street}", "{number} {street}"], CP.UG_FACILITY_PATTERNS, org)
    db = sqlite3.connect(HERE / "x/kenya_data/kenya_data/kenya.db")
    kn = nia("ke", "address")
    col = lambda t: [r[0] for r in db.execute(f"select name from {t}")]
    write_places("KE", ["kenya-data 0.1.2 (PyPI, MIT licence; data from the kenya-regions project, MIT): counties, sub-counties, constituencies, wards (sampled)",
                        f"{NIA}: ke address (cities, streets)"],
                 "MIT (kenya-data, niafaker)",
                 {"wards": clean([tc(n) for n in col("wards")], limit=900), "subcounties": clean([tc(n) for n in col("sub_counties")]),
                  "constituencies": clean([tc(n) for n in col("constituencies")]), "counties": clean([tc(n) for n in col("counties")]),
                  "cities": clean(kn["cities"])},
                 clean(kn["streets"]), ["{street}, {number}", "{number} {street}"], CP.KE_FACILITY_PATTERNS,
                 ["{place} Primary School", "{place} Secondary School", "{place} Self Help Group", "{place} Traders Ltd"])
    g = json.loads((HERE / "x/rwanda_geo_data/rwanda_geo_data/data.json").read_text())
    provinces = list(g)
    districts = [dn for p in g.values() for dn in p]
    sectors = [sn for p in g.values() for ds in p.values() for sn in ds]
    cells = [cn for p in g.values() for ds in p.values() for ss in ds.values() for cn in ss]
    villages = [v for p in g.values() for ds in p.values() for ss in ds.values() for cs in ss.values() for v in cs]
    villages = [v for v in villages if not v.rstrip().endswith((" I", " II", " III", " IV", " V"))]
    rn = nia("rw", "address")
    write_places("RW", ["rwanda-geo-data 1.1.0 (PyPI, MIT licence): provinces, districts, sectors, cells, villages (sampled)",
                        f"{NIA}: rw address (streets)"],
                 "MIT (rwanda-geo-data, niafaker)",
                 {"villages": clean(villages, limit=1500), "cells": clean(cells, limit=800), "sectors": clean(sectors),
                  "districts": clean(districts), "provinces": clean(provinces), "cities": clean(rn["cities"])},
                 clean(rn["streets"]), ["{street} {number}", "{number} {street}"], CP.RW_FACILITY_PATTERNS,
                 ["Koperative {place}", "Ishuri Ribanza rya {place}", "{place} Primary School"])
    from tanzania_locations.data import REGIONS
    tn = nia("tz", "address")
    write_places("TZ", ["tanzania-locations 1.5.0 (PyPI, MIT licence; data from the Tanzania National Bureau of Statistics): regions, districts",
                        f"{NIA}: tz address (cities, streets)"],
                 "MIT (tanzania-locations, niafaker)",
                 {"districts": clean(dn for r in REGIONS.values() for dn in r["districts"]), "regions": clean(REGIONS),
                  "cities": clean(tn["cities"])},
                 clean(tn["streets"]), ["Mtaa wa {street}, Na. {number}", "{number} {street}"], CP.TZ_FACILITY_PATTERNS,
                 ["Shule ya Msingi {place}", "Chama cha Ushirika {place}", "{place} Traders Ltd"])
    en_n = nia("et", "address")
    write_places("ET", [f"{NIA}: et address (cities, regions, streets)"], "MIT (niafaker)",
                 {"cities": clean(en_n["cities"]), "regions": clean(en_n["regions"])},
                 clean(en_n["streets"]), en_n["street_patterns"], CP.ET_FACILITY_PATTERNS)
    hosp = lambda *p: list(p)
    dD = faker_address("de_DE")
    write_places("DE", [f"{FAKER}: de_DE address provider (cities, states)", CURP + " (common street names)"], "MIT (Faker); curated lists CC0",
                 {"cities": clean(dD.cities), "states": clean(dD.states)}, clean(split(CP.DE_STREETS)),
                 ["{street} {number}"], hosp("Klinikum {place}", "Krankenhaus {place}", "Kreiskrankenhaus {place}", "Universitätsklinikum {place}", "Praxis am Markt {place}"),
                 ["Stadtwerke {place}", "Sparkasse {place}", "Gymnasium {place}", "Bäckerei {place} GmbH"])
    for cc, loc, kinds in (("AT", "de_AT", ("cities", "states")), ("CH", "de_CH", ("cities", "cantons"))):
        P = faker_address(loc)
        write_places(cc, [f"{FAKER}: {loc} address provider", CURP + " (common street names)"], "MIT (Faker); curated lists CC0",
                     {k: clean(getattr(P, k)) for k in kinds}, clean(split(CP.DE_STREETS)), ["{street} {number}"],
                     ["Klinikum {place}", "Landeskrankenhaus {place}", "Spital {place}"], ["Gemeindewerke {place}"])
    eS = faker_address("es_ES")
    write_places("ES", [f"{FAKER}: es_ES address provider (provinces, autonomous communities)", CURP + " (municipalities, street names)"],
                 "MIT (Faker); curated lists CC0",
                 {"cities": clean(split(CP.ES_CITIES)), "provinces": clean(eS.states), "regions": clean(eS.regions)},
                 clean(split(CP.ES_STREETS)), ["{street}, {number}", "{street} {number}"],
                 ["Hospital Universitario de {place}", "Hospital General de {place}", "Centro de Salud {place}", "Clínica {place}"],
                 ["Colegio Público {place}", "Cooperativa {place}", "Talleres {place} S.L."])
    for cc, loc, kinds in (("MX", "es_MX", ("states",)), ("AR", "es_AR", ("municipalities", "provinces")), ("CO", "es_CO", ("municipalities", "departments"))):
        P = faker_address(loc)
        lists = {k: clean(getattr(P, k), limit=800) for k in kinds}
        if cc == "CO":
            lists = {"cities": lists["municipalities"], "departments": lists["departments"]}
        elif cc == "AR":
            lists = {"cities": lists["municipalities"], "provinces": lists["provinces"]}
        write_places(cc, [f"{FAKER}: {loc} address provider", CURP + " (street names)"], "MIT (Faker); curated lists CC0",
                     lists, clean(split(CP.ES_STREETS)), ["{street} {number}"],
                     ["Hospital General de {place}", "Centro de Salud {place}", "Clínica {place}"], ["Cooperativa {place}"])
    fF = faker_address("fr_FR")
    write_places("FR", [f"{FAKER}: fr_FR address provider (departments, regions)", CURP + " (communes, street names)"],
                 "MIT (Faker); curated lists CC0",
                 {"cities": clean(split(CP.FR_CITIES)), "departments": clean(n for _, n in fF.departments), "regions": clean(fF.regions)},
                 clean(split(CP.FR_STREETS)), ["{number} {street}", "{number}, {street}"],
                 ["Centre hospitalier de {place}", "CHU de {place}", "Clinique de {place}", "Maison de santé de {place}"],
                 ["École primaire de {place}", "Mairie de {place}", "Boulangerie de {place} SARL"])
    write_places("BE", [f"{FAKER}: nl_BE address provider (municipalities, provinces)", CURP + " (street names)"], "MIT (Faker); curated lists CC0",
                 {"cities": clean(faker_address("nl_BE").cities, limit=800), "provinces": clean(faker_address("nl_BE").provinces)},
                 clean(split(CP.FR_STREETS)), ["{street} {number}"], ["AZ {place}", "Centre hospitalier de {place}", "Ziekenhuis {place}"])
    write_places("US", [f"{FAKER}: en_US address provider (states)", CURP + " (cities, street names)"], "MIT (Faker); curated lists CC0",
                 {"cities": clean(split(CP.US_CITIES)), "states": clean(faker_address("en_US").states)},
                 clean(split(CP.US_STREETS)), ["{number} {street}"],
                 ["{place} General Hospital", "{place} Medical Center", "{place} Community Health Center", "{place} Family Clinic"],
                 ["{place} Elementary School", "{place} High School", "{place} Hardware Inc.", "{place} Savings Bank"])
    write_places("GB", [f"{FAKER}: en_GB address provider (counties)", CURP + " (towns, street names)"], "MIT (Faker); curated lists CC0",
                 {"cities": clean(split(CP.GB_TOWNS)), "counties": clean(faker_address("en_GB").counties)},
                 clean(split(CP.GB_STREETS)), ["{number} {street}"],
                 ["{place} General Hospital", "{place} Royal Infirmary", "{place} Health Centre", "{place} Medical Practice", "{place} Community Hospital"],
                 ["{place} Primary School", "{place} Academy", "{place} Building Society", "{place} Motors Ltd"])
    vV = faker_address("vi_VN")
    write_places("VN", [f"{FAKER}: vi_VN address provider (streets)", CURP + " (provinces and cities before the 2025 merger)"],
                 "MIT (Faker); curated lists CC0",
                 {"cities": clean(split(CP.VN_CITIES)), "provinces": clean(split(CP.VN_PROVINCES))},
                 clean(vV.streets), ["Số {number} {street}", "{number} {street}"],
                 ["Bệnh viện Đa khoa {place}", "Bệnh viện {place}", "Trung tâm Y tế {place}", "Trạm Y tế {place}", "Phòng khám {place}"],
                 ["Trường Tiểu học {place}", "Công ty TNHH {place}", "Hợp tác xã {place}"])
    iI = faker_address("it_IT")
    write_places("IT", [f"{FAKER}: it_IT address provider (comuni sampled, provinces)", CURP + " (street names)"], "MIT (Faker); curated lists CC0",
                 {"cities": clean(iI.cities, limit=1200), "provinces": clean(iI.states)},
                 ["Via Roma", "Via Garibaldi", "Via Mazzini", "Via Cavour", "Corso Italia", "Via Dante", "Piazza della Repubblica",
                  "Via Verdi", "Via Marconi", "Via Matteotti", "Via XX Settembre", "Via Vittorio Emanuele", "Viale Europa", "Via San Francesco",
                  "Via dei Mille", "Via Manzoni", "Via Leopardi", "Piazza del Duomo", "Via Nazionale", "Via della Libertà"],
                 ["{street} {number}", "{street}, {number}"],
                 ["Ospedale Civile di {place}", "Presidio Ospedaliero di {place}", "Casa di Cura {place}", "Poliambulatorio di {place}"],
                 ["Scuola Primaria di {place}", "Cooperativa {place}"])
    nN = faker_address("nl_NL")
    write_places("NL", [f"{FAKER}: nl_NL address provider (places sampled, provinces)", CURP + " (street names)"], "MIT (Faker); curated lists CC0",
                 {"cities": clean(nN.cities, limit=1000), "provinces": clean(nN.provinces)},
                 ["Kerkstraat", "Schoolstraat", "Molenweg", "Dorpsstraat", "Stationsweg", "Julianastraat", "Beatrixstraat",
                  "Wilhelminastraat", "Nieuwstraat", "Markt", "Kastanjelaan", "Eikenlaan", "Prins Bernhardstraat", "Emmastraat",
                  "Industrieweg", "Parallelweg", "Sportlaan", "Hoofdstraat", "Lindelaan", "Oranjestraat"],
                 ["{street} {number}"], ["Ziekenhuis {place}", "Medisch Centrum {place}", "Huisartsenpraktijk {place}", "Gezondheidscentrum {place}"],
                 ["Basisschool {place}", "Woningstichting {place}"])
    pP = faker_address("pt_PT")
    write_places("PT", [f"{FAKER}: pt_PT address provider (cities, concelhos, freguesias, distritos)"], "MIT (Faker)",
                 {"freguesias": clean(pP.freguesias), "cities": clean(pP.cities), "concelhos": clean(pP.concelhos), "distritos": clean(pP.distritos)},
                 ["Rua Direita", "Rua da Igreja", "Avenida da Liberdade", "Rua do Comércio", "Rua Nova", "Largo da Igreja",
                  "Rua de Santo António", "Rua 25 de Abril", "Avenida da República", "Rua da Escola", "Rua do Sol", "Travessa do Poço"],
                 ["{street}, {number}", "{street} {number}"],
                 ["Hospital de {place}", "Centro de Saúde de {place}", "Unidade de Saúde Familiar {place}"], ["Escola Básica de {place}"])
    bB = faker_address("pt_BR")
    write_places("BR", [f"{FAKER}: pt_BR address provider (bairros, estados)"], "MIT (Faker)",
                 {"bairros": clean(bB.bairros), "estados": clean(n for _, n in bB.estados)},
                 ["Rua das Flores", "Avenida Brasil", "Rua São João", "Rua Sete de Setembro", "Avenida Getúlio Vargas",
                  "Rua XV de Novembro", "Rua Tiradentes", "Rua Santos Dumont", "Avenida Paulista", "Rua da Paz", "Rua Dom Pedro II"],
                 ["{street}, {number}"],
                 ["Hospital Municipal de {place}", "UBS {place}", "Posto de Saúde {place}", "Santa Casa de {place}"], ["Escola Estadual {place}"])
    mzn = None
    inI = faker_address("en_IN"); hiI = faker_address("hi_IN")
    write_places("IN", [f"{FAKER}: en_IN and hi_IN address providers (cities, states; Latin and Devanagari)"], "MIT (Faker)",
                 {"cities": clean(list(inI.cities) + list(hiI.cities)), "states": clean(list(inI.states) + list(hiI.states))},
                 ["MG Road", "Station Road", "Gandhi Nagar", "Nehru Road", "Park Street", "Main Bazaar", "Civil Lines", "Mall Road", "Subhash Marg", "Tilak Road"],
                 ["{number}, {street}"],
                 ["{place} District Hospital", "{place} Primary Health Centre", "{place} Community Health Centre", "{place} Civil Hospital"],
                 ["{place} Public School", "{place} Cooperative Bank"])
    cN = faker_address("zh_CN")
    write_places("CN", [f"{FAKER}: zh_CN address provider (cities, districts, provinces)"], "MIT (Faker)",
                 {"districts": clean(cN.districts), "cities": clean(cN.cities), "provinces": clean(cN.provinces)}, (), (),
                 ["{place}人民医院", "{place}中医院", "{place}卫生院", "{place}社区卫生服务中心"], ["{place}小学", "{place}有限公司"])
    rR = faker_address("ru_RU")
    write_places("RU", [f"{FAKER}: ru_RU address provider (cities, oblasts, republics)"], "MIT (Faker)",
                 {"cities": clean(rR.city_names), "regions": clean(list(rR.region_oblast) + list(rR.region_republics) + list(rR.region_krai))},
                 clean(f"улица {t}" for t in list(rR.street_titles)[:150]), ["{street}, д. {number}"],
                 ["Городская больница г. {place}", "Центральная районная больница г. {place}", "Поликлиника г. {place}"],
                 ["Школа г. {place}", "ООО «{place}»"])


if __name__ == "__main__":
    main_names()
    main_places()
