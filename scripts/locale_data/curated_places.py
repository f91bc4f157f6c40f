"""Curated place lists (polydeid contributors; well-known public geographic names)."""

US_CITIES = """New York|Los Angeles|Chicago|Houston|Phoenix|Philadelphia|San Antonio|San Diego|Dallas|San Jose|Austin|
Jacksonville|Fort Worth|Columbus|Charlotte|Indianapolis|San Francisco|Seattle|Denver|Washington|Nashville|Oklahoma City|
El Paso|Boston|Portland|Las Vegas|Detroit|Memphis|Louisville|Baltimore|Milwaukee|Albuquerque|Tucson|Fresno|Sacramento|
Kansas City|Mesa|Atlanta|Omaha|Colorado Springs|Raleigh|Long Beach|Virginia Beach|Miami|Oakland|Minneapolis|Tulsa|
Bakersfield|Wichita|Arlington|Aurora|Tampa|New Orleans|Cleveland|Honolulu|Anaheim|Lexington|Stockton|Corpus Christi|
Henderson|Riverside|Newark|Saint Paul|Santa Ana|Cincinnati|Irvine|Orlando|Pittsburgh|St. Louis|Greensboro|Jersey City|
Anchorage|Lincoln|Plano|Durham|Buffalo|Chandler|Chula Vista|Toledo|Madison|Gilbert|Reno|Fort Wayne|North Las Vegas|
St. Petersburg|Lubbock|Irving|Laredo|Winston-Salem|Chesapeake|Glendale|Garland|Scottsdale|Norfolk|Boise|Fremont|
Spokane|Santa Clarita|Baton Rouge|Richmond|Hialeah|San Bernardino|Tacoma|Modesto|Huntsville|Des Moines|Yonkers|
Rochester|Moreno Valley|Fayetteville|Fontana|Columbus|Worcester|Port St. Lucie|Little Rock|Augusta|Oxnard|Birmingham|
Montgomery|Frisco|Amarillo|Salt Lake City|Grand Rapids|Huntington Beach|Overland Park|Glendale|Tallahassee|
Grand Prairie|McKinney|Cape Coral|Sioux Falls|Peoria|Providence|Vancouver|Knoxville|Akron|Shreveport|Mobile|
Brownsville|Newport News|Fort Lauderdale|Chattanooga|Tempe|Aurora|Santa Rosa|Eugene|Elk Grove|Salem|Ontario|Cary|
Rancho Cucamonga|Oceanside|Lancaster|Garden Grove|Pembroke Pines|Fort Collins|Palmdale|Springfield|Clarksville|
Rockford|Alexandria|Paterson|Savannah|Hartford|Syracuse|Dayton|Springfield|Burlington|Albany|Charleston|Manchester"""

US_STREETS = """Main Street|Oak Street|Maple Avenue|Pine Street|Cedar Lane|Elm Street|Washington Street|Lake Street|Hill Street|
Park Avenue|Church Street|High Street|Walnut Street|Chestnut Street|Spring Street|Jefferson Avenue|Lincoln Avenue|
Madison Avenue|Franklin Street|Jackson Street|Center Street|Union Street|Broadway|River Road|Sunset Boulevard|
Highland Avenue|Meadow Lane|Forest Drive|Lakeview Drive|Cherry Lane|Willow Street|Mill Road|Prospect Street|
Market Street|Grove Street|School Street|Railroad Avenue|Valley Road|Ridge Road|Hickory Lane|Dogwood Drive|
Birch Street|Spruce Street|Adams Street|Monroe Street|Front Street|Second Street|Third Street|Fourth Street|
Fifth Avenue|Sixth Street|Seventh Avenue|Water Street|Bridge Street|Summit Avenue|Woodland Avenue|Garden Street|
Magnolia Avenue|Sycamore Street|Laurel Street|Poplar Street|Aspen Court|Beech Street|Colonial Drive|Harbor Road"""

GB_TOWNS = """London|Birmingham|Manchester|Leeds|Liverpool|Sheffield|Bristol|Newcastle upon Tyne|Nottingham|Leicester|
Coventry|Bradford|Stoke-on-Trent|Wolverhampton|Plymouth|Southampton|Reading|Derby|Luton|Preston|Milton Keynes|
Northampton|Norwich|Swindon|Portsmouth|Bournemouth|Middlesbrough|Sunderland|Brighton|Huddersfield|Oxford|Cambridge|
York|Exeter|Gloucester|Ipswich|Peterborough|Watford|Slough|Blackpool|Bolton|Stockport|Warrington|Wigan|Oldham|
Rochdale|Burnley|Blackburn|Lancaster|Carlisle|Durham|Darlington|Hartlepool|Harrogate|Scarborough|Lincoln|Grimsby|
Hull|Doncaster|Rotherham|Barnsley|Wakefield|Chesterfield|Mansfield|Worcester|Hereford|Shrewsbury|Telford|Stafford|
Chester|Crewe|Bath|Salisbury|Winchester|Guildford|Woking|Maidstone|Canterbury|Dover|Hastings|Eastbourne|Chelmsford|
Colchester|Southend-on-Sea|Basildon|Bedford|Stevenage|St Albans|Hemel Hempstead|High Wycombe|Aylesbury|Banbury|
Cheltenham|Taunton|Truro|Torquay|Weymouth|Poole|Basingstoke|Crawley|Horsham|Edinburgh|Glasgow|Aberdeen|Dundee|
Inverness|Stirling|Perth|Paisley|Kilmarnock|Ayr|Cardiff|Swansea|Newport|Wrexham|Bangor|Aberystwyth|Belfast|Derry|
Lisburn|Newry|Armagh|Kendal|Penrith|Whitby|Keswick|Ely|Kettering|Corby|Wellingborough|Rugby|Nuneaton|Tamworth|
Lichfield|Burton upon Trent|Loughborough|Grantham|Boston|King's Lynn|Great Yarmouth|Lowestoft|Bury St Edmunds"""

GB_STREETS = """High Street|Station Road|Church Street|Main Street|Park Road|Church Lane|London Road|Victoria Road|
Green Lane|Manor Road|Church Road|Park Avenue|Queens Road|The Crescent|Kings Road|New Road|Grange Road|Mill Lane|
School Lane|North Street|Alexandra Road|York Road|Springfield Road|George Street|The Green|West Street|Albert Road|
Stanley Road|Richmond Road|Windsor Road|Queen Street|South Street|Chapel Street|Mill Road|Highfield Road|
Broadway|Orchard Close|The Avenue|Castle Street|Market Street|Bridge Street|Water Lane|King Street|Elm Grove|
Oak Avenue|Beech Road|Cedar Close|Meadow Way|Hill View|Brook Lane|St John's Road|Marlborough Road"""

ES_CITIES = """Madrid|Barcelona|Valencia|Sevilla|Zaragoza|Málaga|Murcia|Palma|Las Palmas de Gran Canaria|Bilbao|Alicante|
Córdoba|Valladolid|Vigo|Gijón|L'Hospitalet de Llobregat|Vitoria-Gasteiz|A Coruña|Elche|Granada|Terrassa|Badalona|
Oviedo|Cartagena|Sabadell|Jerez de la Frontera|Móstoles|Santa Cruz de Tenerife|Pamplona|Almería|Alcalá de Henares|
Fuenlabrada|Leganés|San Sebastián|Getafe|Burgos|Albacete|Santander|Castellón de la Plana|Alcorcón|San Cristóbal de La Laguna|
Logroño|Badajoz|Salamanca|Huelva|Marbella|Lleida|Tarragona|León|Cádiz|Dos Hermanas|Mataró|Torrejón de Ardoz|Parla|
Algeciras|Jaén|Ourense|Reus|Torrevieja|Girona|Lugo|Cáceres|Santiago de Compostela|Lorca|Cornellà de Llobregat|
Talavera de la Reina|Guadalajara|Toledo|Ponferrada|Zamora|Palencia|Ávila|Segovia|Soria|Cuenca|Teruel|Huesca|
Ciudad Real|Mérida|Pontevedra|Ferrol|Avilés|Torrelavega|Aranjuez|Benidorm|Gandia|Sagunto|Manresa|Vic|Figueres|
Ronda|Antequera|Linares|Úbeda|Motril|Estepona|Fuengirola|Vélez-Málaga|El Puerto de Santa María|Sanlúcar de Barrameda|
Arrecife|Puerto del Rosario|Ibiza|Mahón|Calatayud|Tudela|Miranda de Ebro|Irún|Barakaldo|Getxo|Eibar|Durango"""

ES_STREETS = """Calle Mayor|Calle Real|Calle de la Iglesia|Avenida de la Constitución|Plaza de España|Calle del Sol|
Calle Nueva|Calle San José|Calle de Cervantes|Avenida de Andalucía|Calle de la Paz|Calle del Carmen|Paseo de la Castellana|
Calle de Alcalá|Gran Vía|Calle de Toledo|Avenida del Mediterráneo|Calle de las Flores|Calle del Pilar|Calle Ancha|
Calle de la Fuente|Calle del Río|Calle de San Francisco|Avenida de la Libertad|Calle Santa María|Calle de Goya|
Calle de Velázquez|Calle del Olmo|Calle de los Almendros|Camino Real|Ronda de Valencia|Calle del Molino|
Avenida de América|Calle de Castilla|Calle Lope de Vega|Calle Antonio Machado|Calle Federico García Lorca|
Calle de la Luna|Calle de la Estación|Calle del Mercado|Plaza Mayor|Calle Colón|Avenida de Europa|Calle de Galicia"""

FR_CITIES = """Paris|Marseille|Lyon|Toulouse|Nice|Nantes|Montpellier|Strasbourg|Bordeaux|Lille|Rennes|Reims|Toulon|
Saint-Étienne|Le Havre|Grenoble|Dijon|Angers|Villeurbanne|Nîmes|Saint-Denis|Clermont-Ferrand|Le Mans|Aix-en-Provence|
Brest|Tours|Amiens|Limoges|Annecy|Perpignan|Boulogne-Billancourt|Metz|Besançon|Orléans|Rouen|Mulhouse|Caen|Nancy|
Argenteuil|Montreuil|Roubaix|Tourcoing|Avignon|Nanterre|Vitry-sur-Seine|Créteil|Poitiers|Versailles|Pau|Colombes|
Aubervilliers|Asnières-sur-Seine|Courbevoie|Cherbourg|La Rochelle|Calais|Champigny-sur-Marne|Rueil-Malmaison|
Antibes|Béziers|Saint-Maur-des-Fossés|Cannes|Bourges|Drancy|Mérignac|Saint-Nazaire|Colmar|Issy-les-Moulineaux|
Noisy-le-Grand|Évry|Vénissieux|Cergy|Levallois-Perret|Valence|Quimper|Troyes|Chambéry|Niort|Lorient|Sarcelles|
Villejuif|Beauvais|Hyères|Cholet|Vannes|Saint-Quentin|Laval|Ajaccio|Bastia|Angoulême|Périgueux|Agen|Tarbes|
Bayonne|Biarritz|Arles|Chartres|Auxerre|Blois|Châteauroux|Nevers|Mâcon|Bourg-en-Bresse|Gap|Albi|Rodez|Carcassonne|
Montauban|Cahors|Saint-Malo|Saint-Brieuc|Lannion|Dunkerque|Arras|Douai|Valenciennes|Charleville-Mézières|Épinal|
Belfort|Thionville|Sète|Narbonne|Alès|Fréjus|Menton|Grasse|Vichy|Montluçon|Aurillac|Le Puy-en-Velay"""

FR_STREETS = """rue de la République|rue Victor Hugo|avenue Jean Jaurès|rue de la Gare|rue de l'Église|place de la Mairie|
rue Pasteur|rue du Moulin|rue des Écoles|rue Jules Ferry|avenue de la Libération|rue du Général de Gaulle|
boulevard Gambetta|rue de la Paix|rue Principale|rue du Château|rue des Lilas|rue des Roses|chemin des Vignes|
allée des Tilleuls|rue Voltaire|rue Émile Zola|avenue Foch|rue Nationale|rue de Paris|route de Lyon|rue du Stade|
rue de la Fontaine|impasse des Acacias|rue du Commerce|avenue du Maréchal Leclerc|rue Jean Moulin|rue Anatole France|
rue Gambetta|rue de Verdun|rue des Jardins|rue du Four|rue du Marché|quai de la Loire|boulevard Carnot|rue Carnot|
place du Marché|rue de la Liberté|rue Saint-Martin|rue Molière|rue Alsace-Lorraine|rue des Prés|rue du Pont"""

DE_STREETS = """Hauptstraße|Schulstraße|Gartenstraße|Bahnhofstraße|Dorfstraße|Bergstraße|Birkenweg|Lindenstraße|Kirchstraße|
Waldstraße|Ringstraße|Schillerstraße|Goethestraße|Wiesenweg|Am Sportplatz|Jahnstraße|Mühlenweg|Buchenweg|Feldstraße|
Rosenstraße|Am Markt|Friedhofstraße|Mozartstraße|Poststraße|Amselweg|Wiesenstraße|Lessingstraße|Eichenweg|Ahornweg|
Industriestraße|Kirchweg|Talstraße|Finkenweg|Parkstraße|Brunnenstraße|Blumenstraße|Tulpenweg|Meisenweg|Am Bach|
Kastanienallee|Beethovenstraße|Uhlandstraße|Kantstraße|Marktplatz|Friedrichstraße|Luisenstraße|Wilhelmstraße|
Bismarckstraße|Kaiserstraße|Mittelweg|Schlossstraße|Burgstraße|Mühlstraße|Sonnenstraße|Am Anger|Lerchenweg"""

VN_PROVINCES = """Hà Nội|Hồ Chí Minh|Hải Phòng|Đà Nẵng|Cần Thơ|An Giang|Bà Rịa – Vũng Tàu|Bắc Giang|Bắc Kạn|Bạc Liêu|
Bắc Ninh|Bến Tre|Bình Định|Bình Dương|Bình Phước|Bình Thuận|Cà Mau|Cao Bằng|Đắk Lắk|Đắk Nông|Điện Biên|Đồng Nai|
Đồng Tháp|Gia Lai|Hà Giang|Hà Nam|Hà Tĩnh|Hải Dương|Hậu Giang|Hòa Bình|Hưng Yên|Khánh Hòa|Kiên Giang|Kon Tum|
Lai Châu|Lâm Đồng|Lạng Sơn|Lào Cai|Long An|Nam Định|Nghệ An|Ninh Bình|Ninh Thuận|Phú Thọ|Phú Yên|Quảng Bình|
Quảng Nam|Quảng Ngãi|Quảng Ninh|Quảng Trị|Sóc Trăng|Sơn La|Tây Ninh|Thái Bình|Thái Nguyên|Thanh Hóa|
Thừa Thiên Huế|Tiền Giang|Trà Vinh|Tuyên Quang|Vĩnh Long|Vĩnh Phúc|Yên Bái"""

VN_CITIES = """Hà Nội|Thành phố Hồ Chí Minh|Hải Phòng|Đà Nẵng|Cần Thơ|Huế|Nha Trang|Vũng Tàu|Biên Hòa|Buôn Ma Thuột|
Quy Nhơn|Vinh|Thái Nguyên|Nam Định|Hạ Long|Đà Lạt|Long Xuyên|Mỹ Tho|Rạch Giá|Cà Mau|Bạc Liêu|Sóc Trăng|Phan Thiết|
Pleiku|Thủ Dầu Một|Bắc Ninh|Hải Dương|Thanh Hóa|Việt Trì|Lào Cai|Sơn La|Điện Biên Phủ|Tuy Hòa|Quảng Ngãi|Tam Kỳ|
Hội An|Đông Hà|Đồng Hới|Hà Tĩnh|Ninh Bình|Phủ Lý|Hưng Yên|Thái Bình|Uông Bí|Cẩm Phả|Móng Cái|Lạng Sơn|Cao Bằng|
Tuyên Quang|Yên Bái|Hòa Bình|Kon Tum|Gia Nghĩa|Bảo Lộc|Tây Ninh|Tân An|Bến Tre|Trà Vinh|Vĩnh Long|Cao Lãnh|
Sa Đéc|Châu Đốc|Vị Thanh|Hà Tiên"""

UG_FACILITY_PATTERNS = ["{place} Health Centre II", "{place} Health Centre III", "{place} Health Centre IV",
    "{place} General Hospital", "{place} Regional Referral Hospital", "{place} Medical Centre", "{place} Clinic"]
KE_FACILITY_PATTERNS = ["{place} Dispensary", "{place} Health Centre", "{place} Sub-County Hospital",
    "{place} County Referral Hospital", "{place} Medical Clinic", "{place} Nursing Home"]
TZ_FACILITY_PATTERNS = ["Zahanati ya {place}", "Kituo cha Afya {place}", "Hospitali ya Wilaya ya {place}",
    "{place} Dispensary", "{place} Health Centre", "{place} District Hospital"]
RW_FACILITY_PATTERNS = ["Poste de Santé {place}", "Centre de Santé {place}", "Hôpital de District de {place}",
    "Ivuriro rya {place}", "{place} Health Centre", "{place} District Hospital"]
ET_FACILITY_PATTERNS = ["{place} Health Center", "{place} Health Post", "{place} General Hospital",
    "{place} Primary Hospital", "{place} Referral Hospital"]
"""Patterns only; a surrogate facility never names a real one."""
