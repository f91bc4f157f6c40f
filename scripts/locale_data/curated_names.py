"""Curated name lists (polydeid contributors; common names, public knowledge)."""

UG_CHRISTIAN_MALE = """Joseph John Peter James David Samuel Moses Michael Patrick Robert Daniel Ronald George Henry Paul
Edward Emmanuel Andrew Charles Richard Stephen Simon Francis Lawrence Isaac Jacob Philip Thomas Vincent William
Denis Geoffrey Godfrey Julius Fred Ivan Brian Allan Kenneth Martin Nicholas Herbert Alex Joel Mark Timothy Ambrose
Benedict Charles Cyprian Deogratius Emmanuel Fulgensio Gerald Innocent Joachim Kizito Lwanga Matia Nelson Ronald
Sam Solomon Tonny Wilson Yusuf Hassan Ali Musa Ibrahim Abdul Swaibu Hamza Twaha""".split()

UG_CHRISTIAN_FEMALE = """Grace Mary Joyce Esther Sarah Ruth Elizabeth Rose Agnes Catherine Margaret Florence Betty Alice
Josephine Violet Christine Irene Stella Angella Annet Brenda Doreen Eva Fiona Gloria Harriet Immaculate Jane Jackline
Juliet Lydia Maria Martha Mercy Miriam Monica Patience Phiona Prossy Rebecca Resty Ritah Robinah Sandra Scovia
Sharon Susan Winnie Zaituni Aisha Fatuma Hadijah Mariam Shamim Teopista Proscovia Dorothy Beatrice Judith Lillian""".split()

GANDA_MALE = """Ssemakula Kato Wasswa Mukasa Kiggundu Lubega Ssentongo Kalule Kizza Kigozi Ssebunya Mayanja Lwanga
Nsubuga Ssekandi Ssemwanga Musoke Kasule Mulindwa Kiwanuka Lutaaya Ssenyonga Bbosa Kayemba Ssali Kibirige Mugerwa
Kaggwa Lukwago Sserwadda Kakooza Ssekitoleko Ddamulira Zziwa Walusimbi Ssebbaale Kasozi Kizito Kyeyune Ssempala
Ssemanda Kayongo Lule Mutebi Kabuye Kironde Lutalo Mpagi Muwanga Ssekyewa Ssenkubuge Ssewankambo Wamala Kasirye
Katende Kawooya Kiyimba Luyimbazi Magala Mbaziira Mukiibi Mulema Nsereko Ssebagala Ssekamatte Ssemujju Ssentamu
Tamale Wavamunno Kayiwa Kalyango Bukenya Ssekabira Kyazze Mawanda Kisitu Ssebuliba""".split()

GANDA_FEMALE = """Nakato Babirye Namukasa Nansubuga Nalubega Nakiganda Nakayiza Namusoke Nabatanzi Nalwadda Nakimuli
Namuli Nabukeera Nanteza Nambi Nakalema Namazzi Nalule Nassali Nakibuuka Najjemba Nabbosa Nakabugo Nakku Nantongo
Nakiwala Namubiru Nalwoga Nabukalu Nakitende Nabukenya Nabirye Nakazibwe Nakanwagi Namatovu Nankya Nanyonga
Nabaggala Nakawooya Nakirya Nalumansi Namagembe Nambooze Namirembe Nampijja Nankinga Nansamba Nantume Nanyanzi
Nassuna Nawagga Nakyanzi Nabwire Nagawa Nakalanzi Nakalyango Nakasi Nakazzi Nakiyingi Nalukwago Namayanja""".split()

GANDA_CLANS = """Ffumbe Lugave Ngeye Nkima Mmamba Nsenene Nte Mbogo Njovu Ngabi Nkejje Kkobe Nvubu Nsuma Mpindi Ngo
Kasimba Mbwa Ngonge Nkerebwe Kinyomo Ngaali Nakinsige Butiko Mutima Ndiga Nnyonyi Mpologoma Nswaswa Kayozi Kibe
Nkusu Mbuzi Nkula Musu""".split()

UG_OTHER_FAMILY = """Mugisha Tumwesigye Okello Otim Opio Ocen Asiimwe Muhindo Byaruhanga Odongo Mbabazi Tumwine
Ochieng Ojok Olweny Onen Oryem Okot Owor Akena Atwine Bainomugisha Kamugisha Kyomuhendo Mwesigwa Rukundo
Twinomujuni Ainomugisha Ahimbisibwe Tusiime Nuwagaba Byamugisha Wafula Wanyama Wandera Waiswa Mugabi Isabirye
Kagoda Balidawa Mwanje Magezi Nabende Masaba Wekesa Egesa Ekwaro Emuron Opolot Okiror Ariong Oluka Ebong""".split()

UG_OTHER_FEMALE = """Akello Apio Adong Auma Atim Acen Aciro Akullu Amony Lanyero Aber Ayot Birungi Natukunda Ainembabazi
Kyomugisha Tumusiime Kembabazi Ninsiima Kobusingye Nyesiga Atuhaire Ahumuza Mbabazi Biira Masika Kabugho Nabwire
Nafula Nekesa Namono Alupo Amuge Akiror Atai""".split()

RW_GIVEN_MALE = """Jean Claude Emmanuel Eric Patrick Olivier Jean-Paul Jean-Baptiste Pierre Joseph Innocent Didier Fabrice
Theogene Theoneste Celestin Eugene Aimable Alexis Alphonse Andre Augustin Bosco Callixte Damascene Dieudonne Egide
Emile Evariste Faustin Felicien Gaspard Gilbert Hubert Janvier Leonard Martin Protais Samuel Thomas Vincent
Valens Yves Francois Gerard Pacifique Fidele Jules Moise""".split()

RW_GIVEN_FEMALE = """Alice Diane Claudine Josiane Aline Chantal Clarisse Solange Vestine Jeanne Marie Annonciata Beatrice
Bernadette Cecile Consolee Delphine Donatille Esperance Francine Gaudence Immaculee Jacqueline Josephine Jeannette
Laetitia Liliane Madeleine Marthe Odette Pascasie Philomene Rose Seraphine Speciose Therese Vestine Yvonne
Angelique Christine Emerthe Godelieve Goretti""".split()

RW_FAMILY_MALE = """Habimana Niyonzima Mugisha Nshimiyimana Hakizimana Ndayisaba Bizimana Nsengimana Niyonsaba Twagirimana
Munyaneza Ntwari Gatera Mutabazi Kwizera Manzi Habiyaremye Tuyisenge Nsabimana Harerimana Nkurunziza Rukundo Mugabo
Kayitare Ndahiro Ruzindana Rwigema Gasana Karangwa Kamanzi Gasore Habyarimana Hategekimana Mbarushimana Munyakazi
Murenzi Mutangana Ndagijimana Ngabonziza Niyitegeka Nsanzimana Ntaganda Rugamba Rutayisire Sebahire Semana
Twizeyimana Uwimana Iradukunda Ishimwe Byiringiro Niyomugabo Munyentwari Ndikumana Nzabonimana Sibomana""".split()

RW_FAMILY_FEMALE = """Mutesi Uwase Umutoni Uwamahoro Mukamana Mukeshimana Uwera Ingabire Nyiraneza Umuhoza Mukandayisenga
Uwamariya Mukamurenzi Nyirahabimana Uwingabire Akaliza Keza Umutesi Mukamusoni Mukarugwiza Nyiramana Uwanyirigira
Murekatete Mukagatare Nyiransabimana Uwimana Iradukunda Ishimwe Uwineza Umulisa Kampire Mukashema Mukantwari
Nyirabagenzi Uwayezu Mukamazimpaka Mugiraneza Ineza Gwiza Uwase""".split()

RW_CLANS = """Abanyiginya Abega Abazigaba Abagesera Ababanda Abacyaba Abasinga Abasita Abashambo Abatsobe Abakono
Abongera Abenengwe Abashingwe Abahinda Abungura Abaha Abanyakarama""".split()

LUO_MALE = """Otieno Odhiambo Ochieng Omondi Onyango Owino Okoth Ouma Oduor Opiyo Odera Okello Ogola Oketch Obiero
Otiende Oyugi Ondiek Ochola Omollo Odongo Osano Owuor Oloo Okumu Ojwang Obonyo Ogutu Oginga Odinga Okeyo Olang
Opondo Orwa Osewe Otuoma Ouko Owiti Oyoo Nyamwaya Ongeri Ochuka Oburu Odoyo Ogada Ogweno Ojiambo Okal Okinyi""".split()

LUO_FEMALE = """Achieng Akinyi Atieno Adhiambo Anyango Awino Akoth Auma Apiyo Aoko Awuor Adongo Amondi Akello Aluoch
Ajwang Aketch Anyiso Aoro Atoti Akumu Apondi Arunga Aloo Abuya Adoyo Agola Akech Aomo Apudo Aringo Nyar-Ugenya""".split()

KE_CHRISTIAN_MALE = """John Peter James David Samuel Joseph Daniel Paul George Michael Stephen Kennedy Brian Kevin Dennis
Felix Collins Vincent Elijah Fredrick Geoffrey Isaac Jacob Joshua Kevin Maurice Moses Nicholas Patrick Philip
Richard Robert Tom Victor Wycliffe Erick Evans Fidel Hillary Lameck""".split()

KE_CHRISTIAN_FEMALE = """Mary Faith Mercy Sharon Esther Elizabeth Jane Grace Ruth Lucy Caroline Christine Nancy Margaret Ann
Lilian Joyce Purity Eunice Susan Jackline Rose Beatrice Diana Cynthia Catherine Brenda Sarah Naomi Irene Millicent
Pamela Phoebe Rael Risper Roselyne Sylvia Vivian Winnie Everlyne""".split()

AM_MALE = """አበበ ከበደ ተስፋዬ አለሙ ዳዊት ዮናስ መኮንን ሰለሞን ጌታቸው ታደሰ ዮሐንስ በቀለ ካሳ ደስታ አየለ አበራ ዳንኤል ሳሙኤል ሄኖክ
ቴዎድሮስ መሐመድ አሕመድ ኃይሉ አሰፋ ግርማ ወርቅነህ ብሩክ ገብሬ ተፈራ ደረጀ ሙሉጌታ ብርሃኑ ታምራት ፍቅሩ ነጋሽ ሽፈራው ለማ ጥላሁን
አማረ ይልማ ሀብታሙ ኤልያስ ፋሲል ስዩም ግዛው ዘውዱ ታሪኩ በላይ ሲሳይ አብርሃም እንዳለ መስፍን ቢንያም ናትናኤል ኪዳኔ ገረመው
ወልዱ ሙሉ አለማየሁ ተክሌ ገብረመድህን ሀይለማርያም""".split()

AM_FEMALE = """ትዕግስት ገነት አልማዝ ቤተልሔም ፍሬሕይወት ሰናይት አስቴር መሰረት ሐና ሰላም ማህሌት ነፃነት ብርቱካን የሺ ሄለን ራሄል ሳራ
ሜሮን ሕይወት ፀሐይ ዘውዲቱ ብዙነሽ ፋጡማ አበባ ሮማን እየሩሳሌም ኤደን ቅድስት ምሕረት ሊያ ዮርዳኖስ ሰብለ ወርቅነሽ አዜብ ሂሩት ፀጋ
መቅደስ ትርሐስ ሉሊት ሰርካለም""".split()

VI_FAMILY = """Nguyễn Trần Lê Phạm Hoàng Huỳnh Phan Vũ Võ Đặng Bùi Đỗ Hồ Ngô Dương Lý Đinh Trương Lâm Mai Trịnh Đoàn
Cao Lương Tạ Hà Tô Quách Châu Thái Chu Vương Kiều Triệu Mạc Lưu Tăng Đào Văn""".split()

VI_MIDDLE_MALE = "Văn Hữu Đức Minh Quang Công Thanh Xuân Ngọc Quốc Gia Thế Tấn Trọng Đình Bá Duy Hoàng Mạnh Việt".split()
VI_MIDDLE_FEMALE = "Thị Ngọc Thu Thanh Minh Kim Hồng Thùy Bích Mai Phương Diệu Khánh Hoài Bảo Tuyết Mỹ Như".split()

VI_GIVEN_MALE = """An Bình Cường Dũng Đạt Đông Giang Hải Hiếu Hòa Hùng Huy Khánh Khoa Kiên Long Lộc Minh Nam Nghĩa Phong
Phúc Quân Quang Sơn Tài Thắng Thành Thiện Toàn Trung Tú Tuấn Tùng Việt Vinh Vũ Bảo Duy Hưng Kiệt Lâm Nhân Tâm""".split()

VI_GIVEN_FEMALE = """An Anh Châu Chi Dung Giang Hà Hạnh Hằng Hiền Hoa Hồng Huệ Hương Lan Liên Linh Loan Mai My Nga Ngân
Ngọc Nhung Oanh Phương Quyên Quỳnh Tâm Thảo Thanh Thủy Thư Trang Trinh Tuyết Uyên Vân Vy Xuân Yến Nhi Hân Thu""".split()
